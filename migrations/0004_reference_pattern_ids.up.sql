-- Pattern ids imported from the reference system keep their keys
-- (`patterns/3f2a9c1b_1731000000000_aB3-xY`): letters of both cases, digits, `_` and `-`.
-- Ids minted here stay [0-9a-z]; the id column is COLLATE "C", so ordering stays bytewise.
ALTER TABLE patterns DROP CONSTRAINT patterns_id_check;
ALTER TABLE patterns ADD CONSTRAINT patterns_id_check CHECK (id ~ '^[A-Za-z0-9_-]{1,64}$');
