-- Back to every term (0007's definition). Rows keep the terms they have until their task
-- changes; postings and statistics stay consistent with them (the triggers read stored terms).
CREATE OR REPLACE FUNCTION recall_terms(task text) RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path FROM CURRENT
RETURN array_remove(regexp_split_to_array(lower(task), '[^[:alnum:]]+'), '');
