/// The queue's hot-path SQL.
enum Statements {
    static let enqueue = """
        SELECT storesync_enqueue($1, $2::jsonb, $3::bytea, $4::jsonb, $5::smallint, $6::timestamptz, $7::integer, $8)
        """

    /// `storesync_enqueue`'s INSERT and wake-up for a job of payload alone (every follow-up job a handler queues),
    /// without the PL/pgSQL call and its security-definer context around them: what the worker's and the API's
    /// roles may insert into `jobs` themselves. Returns a row only for a job added and due now.
    static let enqueuePayload = """
        WITH job AS (
            INSERT INTO jobs (kind, payload, priority, run_at, unique_key)
            VALUES ($1, $2::jsonb, $3::smallint, coalesce($4::timestamptz, now()), $5)
            ON CONFLICT (unique_key) WHERE unique_key IS NOT NULL DO NOTHING
            RETURNING 1)
        SELECT pg_notify('storesync_jobs', $1) FROM job WHERE coalesce($4::timestamptz, now()) <= now()
        """

    /// `JobQueue.fanOut`: numbered after the pending keys are filtered out, so a skipped job leaves no gap in
    /// the spread; a key taken by a concurrent enqueue meanwhile is skipped by the conflict clause.
    static let fanOut = """
        INSERT INTO jobs (kind, payload, priority, run_at, unique_key)
        SELECT $1::text, f.payload, $2::smallint,
               coalesce($3::timestamptz, now())
                   + (row_number() OVER (ORDER BY f.position) - 1) * ($4::bigint * interval '1 microsecond'),
               f.unique_key
        FROM unnest($5::jsonb[], $6::text[]) WITH ORDINALITY AS f(payload, unique_key, position)
        WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.unique_key = f.unique_key)
        ON CONFLICT (unique_key) WHERE unique_key IS NOT NULL DO NOTHING
        """

    /// `storesync_due_jobs` (V0010) locks at most LIMIT due jobs, highest priority first, reading only due jobs
    /// however many wait for later (a day of spread resyncs), before the UPDATE touches any: an optimisation
    /// fence, without which the planner may update more rows than asked (Oban's `attempt > max_attempts` bug).
    /// Its ids come as one array, so the UPDATE finds them by primary key whatever the planner guesses a
    /// function returns (joined as a table, a guess of 1,000 rows chose a hash join over every job). Jobs come
    /// back in lease order, so slots start the most urgent first.
    static let lease = """
        WITH leased AS (
            UPDATE jobs j
            SET attempt = j.attempt + 1,
                lease_owner = $1,
                leased_at = now(),
                lease_deadline = now() + $3 * interval '1 millisecond',
                last_error = CASE WHEN j.lease_owner IS NULL THEN j.last_error
                                  ELSE 'lease expired: worker ' || j.lease_owner || ' did not finish attempt ' || j.attempt END,
                errors = CASE WHEN j.lease_owner IS NULL THEN j.errors
                              ELSE j.errors || jsonb_build_object('attempt', j.attempt, 'at', now(), 'worker', j.lease_owner,
                                                                  'error', 'lease expired before the worker finished') END
            WHERE j.id = ANY (ARRAY(SELECT storesync_due_jobs($2)))
            RETURNING j.id, j.kind, j.payload, j.raw, j.headers, j.priority, j.attempt, j.max_attempts, j.created_at,
                      j.unique_key, j.run_at, j.last_error)
        SELECT id, kind, payload, raw, headers, priority, attempt, max_attempts, created_at, unique_key, last_error
        FROM leased ORDER BY priority DESC, run_at, id
        """

    /// A heartbeat never waits: rows locked right now are being completed (or retaken after an expired lease)
    /// and need no renewal, and waiting for them could close a deadlock cycle with a completion batch.
    static let heartbeat = """
        WITH held AS (
            SELECT j.id FROM jobs j JOIN unnest($2::bigint[], $3::integer[]) AS f(id, attempt)
                ON j.id = f.id AND j.attempt = f.attempt
            WHERE j.lease_owner = $1
            FOR UPDATE OF j SKIP LOCKED
        )
        UPDATE jobs j SET lease_deadline = now() + $4 * interval '1 millisecond'
        FROM held WHERE j.id = held.id
        RETURNING j.id, j.attempt
        """

    static let release = """
        UPDATE jobs j SET lease_owner = NULL, leased_at = NULL, lease_deadline = NULL, attempt = j.attempt - 1
        FROM unnest($2::bigint[], $3::integer[]) AS f(id, attempt)
        WHERE j.id = f.id AND j.attempt = f.attempt AND j.lease_owner = $1
        """

    /// Takes the row locks before the jobs' own writes run, so the fence cannot change underneath them; in id
    /// order, so two transactions locking overlapping sets cannot deadlock. A lease not returned is lost.
    ///
    /// Here and below, a batch may hold two attempts of one job (a worker that took its own expired job
    /// again): joining the (id, attempt) pairs matches only the one whose lease is current.
    static let lockLeases = """
        SELECT j.id, j.attempt FROM jobs j
        JOIN unnest($2::bigint[], $3::integer[]) AS f(id, attempt) ON j.id = f.id AND j.attempt = f.attempt
        WHERE j.lease_owner = $1
        ORDER BY j.id
        FOR UPDATE OF j
        """

    static let complete = """
        DELETE FROM jobs j
        USING unnest($2::bigint[], $3::integer[]) AS f(id, attempt)
        WHERE j.id = f.id AND j.attempt = f.attempt AND j.lease_owner = $1
        RETURNING j.id, j.attempt
        """

    /// The delay is added to the database's `now()`, never sent as a time read off the worker's clock: the
    /// lease query compares `run_at` with `now()`, and a worker 5 minutes slow would otherwise make every
    /// backoff shorter than that fire at once.
    static let retry = """
        UPDATE jobs j
        SET run_at = now() + f.delay_ms * interval '1 millisecond',
            lease_owner = NULL, leased_at = NULL, lease_deadline = NULL, last_error = f.error,
            errors = j.errors || jsonb_build_object('attempt', j.attempt, 'at', now(), 'worker', $1::text, 'error', f.error)
        FROM unnest($2::bigint[], $3::integer[], $4::bigint[], $5::text[]) AS f(id, attempt, delay_ms, error)
        WHERE j.id = f.id AND j.attempt = f.attempt AND j.lease_owner = $1
        RETURNING j.id, j.attempt
        """

    static let deadLetter = """
        WITH moved AS (
            DELETE FROM jobs j
            USING unnest($2::bigint[], $3::integer[], $4::text[]) AS f(id, attempt, reason)
            WHERE j.id = f.id AND j.attempt = f.attempt AND j.lease_owner = $1
            RETURNING j.id, j.kind, j.payload, j.raw, j.headers, j.priority, j.max_attempts, j.unique_key, j.attempt,
                      j.errors, j.created_at, f.reason)
        INSERT INTO dead_letters (id, kind, payload, raw, headers, priority, max_attempts, unique_key, attempts, errors,
                                  reason, job_created_at)
        SELECT id, kind, payload, raw, headers, priority, max_attempts, unique_key, attempt,
               errors || jsonb_build_object('attempt', attempt, 'at', now(), 'worker', $1::text, 'error', reason),
               reason, created_at
        FROM moved
        RETURNING id, attempts
        """
}
