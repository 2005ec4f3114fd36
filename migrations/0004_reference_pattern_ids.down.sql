-- Back to minted ids only. Fails (and changes nothing) while imported reference-shaped ids
-- exist: delete or re-import those patterns first.
ALTER TABLE patterns DROP CONSTRAINT patterns_id_check;
ALTER TABLE patterns ADD CONSTRAINT patterns_id_check CHECK (id ~ '^[0-9a-z]+$');
