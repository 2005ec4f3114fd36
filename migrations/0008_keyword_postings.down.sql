CREATE INDEX patterns_terms_gin ON patterns USING gin (terms);
DROP TRIGGER recall_postings_update ON patterns;
DROP TRIGGER recall_postings_delete ON patterns;
DROP TRIGGER recall_postings_insert ON patterns;
DROP FUNCTION recall_postings_update();
DROP FUNCTION recall_postings_remove();
DROP FUNCTION recall_postings_add();
DROP TABLE recall_postings;
