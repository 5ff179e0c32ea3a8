/*
 * The HTTP floor of one store notification, for deploy/bench/pipeline-limits.sh: a libmicrohttpd server
 * (the library StoreSync's ingest and the simulator use, in the same threading mode) that answers the
 * exchanges a renewal costs with bodies of their real sizes, and nothing else — no parsing, no routing beyond
 * the path, no JSON, no storage. wrk drives it; their CPU together is what the bytes and the loopback TCP
 * cost at the least.
 *
 * usage: http-floor STATUS_BYTES HISTORY_BYTES   prints its port, then serves until stdin closes.
 *   POST (any path)       reads the body, answers {"stored":true}  (the webhook)
 *   GET  /status          answers STATUS_BYTES                     (GET /inApps/v1/subscriptions/{id})
 *   GET  /history         answers HISTORY_BYTES                    (GET /inApps/v2/history/{id})
 */
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct MHD_Response *stored, *status, *history;

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size,
                              void **request) {
    (void)cls; (void)version; (void)upload_data;
    if (strcmp(method, "POST") == 0) {
        if (*request == NULL) { *request = connection; return MHD_YES; }  /* headers: wait for the body */
        if (*upload_data_size != 0) { *upload_data_size = 0; return MHD_YES; }  /* a chunk of it, dropped */
        return MHD_queue_response(connection, MHD_HTTP_OK, stored);
    }
    return MHD_queue_response(connection, MHD_HTTP_OK, strcmp(url, "/history") == 0 ? history : status);
}

static struct MHD_Response *filled(size_t size) {
    char *body = malloc(size);
    if (body == NULL) { perror("malloc"); exit(1); }
    memset(body, 'a', size);
    struct MHD_Response *response = MHD_create_response_from_buffer(size, body, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(response, "Content-Type", "application/json");
    return response;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: %s STATUS_BYTES HISTORY_BYTES\n", argv[0]); return 2; }
    static char ok[] = "{\"stored\":true}";
    stored = MHD_create_response_from_buffer(strlen(ok), ok, MHD_RESPMEM_PERSISTENT);
    status = filled((size_t)atol(argv[1]));
    history = filled((size_t)atol(argv[2]));
    struct MHD_Daemon *daemon = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, answer, NULL,
                                                 MHD_OPTION_CONNECTION_LIMIT, 1024u, MHD_OPTION_END);
    if (daemon == NULL) { fprintf(stderr, "http-floor: cannot start libmicrohttpd\n"); return 1; }
    printf("%u\n", (unsigned)MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT)->port);
    fflush(stdout);
    char buffer[64];
    while (read(STDIN_FILENO, buffer, sizeof buffer) > 0) {}
    MHD_stop_daemon(daemon);
    return 0;
}
