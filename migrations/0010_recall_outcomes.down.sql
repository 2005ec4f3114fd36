DROP TABLE IF EXISTS recall_outcomes;
DROP TABLE IF EXISTS recall_traces;
