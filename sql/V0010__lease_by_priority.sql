-- The lease read jobs in (priority DESC, run_at, id) order with run_at <= now() only as a filter inside each
-- priority: when fewer jobs were due than a worker asked for, it read every job not yet due as well. The daily
-- resync queues one job per live lineage spread over the day, so with a million subscriptions every lease
-- read a million rows (about 40 ms per 300,000 measured), many times a second.
--
-- storesync_due_jobs walks the priorities present, highest first, one index probe each, and within a priority
-- reads only the due, unleased jobs in (run_at, id) order, locking them as it goes (FOR UPDATE SKIP LOCKED, so
-- concurrent leases take different jobs) and stopping once it holds p_limit: a lease reads what it takes, the
-- few jobs in flight, and one probe per priority, in the same order as before.
CREATE FUNCTION storesync_due_jobs(p_limit integer) RETURNS SETOF bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, public
AS $$
DECLARE
    level     smallint;
    remaining integer := p_limit;
    taken     integer;
BEGIN
    SELECT max(priority) INTO level FROM public.jobs;
    WHILE level IS NOT NULL AND remaining > 0 LOOP
        RETURN QUERY
            SELECT id FROM public.jobs
            WHERE priority = level AND run_at <= now() AND (lease_deadline IS NULL OR lease_deadline <= now())
            ORDER BY run_at, id
            LIMIT remaining
            FOR UPDATE SKIP LOCKED;
        GET DIAGNOSTICS taken = ROW_COUNT;
        remaining := remaining - taken;
        SELECT max(priority) INTO level FROM public.jobs WHERE priority < level;
    END LOOP;
END
$$;

REVOKE ALL ON FUNCTION storesync_due_jobs(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION storesync_due_jobs(integer) TO storesync_worker;
