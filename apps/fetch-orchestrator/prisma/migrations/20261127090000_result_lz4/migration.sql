-- Stored pages are compressed with lz4 rather than Postgres's default pglz: every completed request
-- writes its page (20-50 KB of HTML in the HTTP bench) and pglz spent about 0.4 ms of the server's
-- CPU compressing each, lz4 about 0.1 ms, for a similar size on HTML. Rows stored before keep their
-- pglz values (read as before); new values are lz4. Needs a server built with lz4 (PostgreSQL 14+,
-- the official images and Debian's packages are).
ALTER TABLE "request_results"
    ALTER COLUMN "body" SET COMPRESSION lz4,
    ALTER COLUMN "text" SET COMPRESSION lz4;
