DROP TRIGGER IF EXISTS pattern_counts_track ON patterns;
DROP FUNCTION IF EXISTS pattern_counts_track();
DROP TABLE IF EXISTS pattern_counts;
