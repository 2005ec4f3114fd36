-- 0009: a term longer than 256 bytes is no keyword (docs/behavior.md "Recall" 2; the bound is
-- core/bm25.ts MAX_KEYWORD_TERM_BYTES, which the JSON storage applies in code).
-- A task holding one run of ~2.7 kB of letters or digits could not be stored at all: its
-- posting row (and term statistics row) is larger than a btree entry may be, so learn failed
-- with 500 and import with 503. Such a run (a pasted blob, a base64 payload) is no word anyone
-- searches by: it is left out of patterns.terms, so of the postings, the term statistics and
-- the task's length, and the pattern is stored as any other.

CREATE OR REPLACE FUNCTION recall_terms(task text) RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path FROM CURRENT
RETURN ARRAY(
  SELECT t.term FROM unnest(regexp_split_to_array(lower(task), '[^[:alnum:]]+')) WITH ORDINALITY AS t(term, n)
  WHERE t.term <> '' AND octet_length(t.term) <= 256 ORDER BY t.n
);

-- Patterns stored before, holding a term between 257 bytes and the btree limit: a stored
-- generated column keeps its old value until its row changes, and the keyword triggers act on
-- task changes. Changing the task and changing it back runs them twice, so the postings,
-- statistics and terms follow the new rule through the same code as every write.
UPDATE patterns SET task = task || ' '
WHERE EXISTS (SELECT 1 FROM unnest(terms) AS u(term) WHERE octet_length(u.term) > 256);
UPDATE patterns SET task = left(task, -1)
WHERE task LIKE '% ' AND EXISTS (
  SELECT 1 FROM unnest(regexp_split_to_array(lower(task), '[^[:alnum:]]+')) AS u(term) WHERE octet_length(u.term) > 256
);
