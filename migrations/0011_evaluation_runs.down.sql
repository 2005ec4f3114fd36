-- Reverts 0011: the evaluation runs and their cases go.
DROP TABLE IF EXISTS evaluation_cases;
DROP TABLE IF EXISTS evaluation_runs;
