DROP TABLE IF EXISTS judge_cache;
