-- Webhook bodies are signed tokens: base64 of signatures, certificates and nested tokens, at ~12 KB each for
-- Apple. Every one is TOASTed on ingest, and pglz spent more CPU trying to compress them than any other single
-- step of storing a job. lz4 compresses them as well at a fraction of the cost; stored bodies keep whichever
-- method they were written with, and PostgreSQL reads both. A server built without lz4 keeps pglz.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
        ALTER TABLE jobs ALTER COLUMN raw SET COMPRESSION lz4;
        ALTER TABLE dead_letters ALTER COLUMN raw SET COMPRESSION lz4;
    END IF;
END
$$;
