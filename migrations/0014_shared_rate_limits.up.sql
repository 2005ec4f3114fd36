-- 0014 shared rate limits: one row per bucket (rate class and client IP, or key) and window,
-- counted by every service process on the database (docs/behavior.md "Rate limits"). UNLOGGED:
-- the counts of the current minute are worth no WAL and no replica; a database crash empties
-- the table, which only starts those windows again. Rows of past windows are deleted by the
-- processes as their windows turn. fillfactor leaves room for HOT updates of `hits`.
CREATE UNLOGGED TABLE rate_limit_windows (
  bucket       text        NOT NULL,
  window_start timestamptz NOT NULL,
  hits         integer     NOT NULL,
  granted      integer     NOT NULL,
  PRIMARY KEY (bucket, window_start)
) WITH (fillfactor = 70);
