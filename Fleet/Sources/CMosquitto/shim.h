// The only C that FleetUplink sees of libmosquitto.
//
// libmosquitto's error and option values are C enums and macros; the helpers below give Swift plain `int`s for the
// ones the wrapper uses, so that Swift never depends on how a C enum is imported.
#ifndef CMOSQUITTO_SHIM_H
#define CMOSQUITTO_SHIM_H

#include <mosquitto.h>

#if LIBMOSQUITTO_MAJOR < 2
#error "FleetUplink needs libmosquitto 2.0 or newer (MOSQ_OPT_SEND_MAXIMUM, MQTT 3.1.1 by option)"
#endif

static inline int cmosq_err_success(void) { return MOSQ_ERR_SUCCESS; }
static inline int cmosq_err_inval(void) { return MOSQ_ERR_INVAL; }
static inline int cmosq_err_nomem(void) { return MOSQ_ERR_NOMEM; }
static inline int cmosq_err_no_conn(void) { return MOSQ_ERR_NO_CONN; }
static inline int cmosq_err_conn_refused(void) { return MOSQ_ERR_CONN_REFUSED; }
static inline int cmosq_err_conn_lost(void) { return MOSQ_ERR_CONN_LOST; }
static inline int cmosq_err_tls(void) { return MOSQ_ERR_TLS; }
static inline int cmosq_err_payload_size(void) { return MOSQ_ERR_PAYLOAD_SIZE; }
static inline int cmosq_err_keepalive(void) { return MOSQ_ERR_KEEPALIVE; }
static inline int cmosq_err_errno(void) { return MOSQ_ERR_ERRNO; }

/// Speaks MQTT 3.1.1 (libmosquitto's default is 3.1).
static inline int cmosq_use_mqtt_311(struct mosquitto *mosq) {
    return mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
}

/// QoS 1 and 2 messages sent before their acknowledgements; libmosquitto queues the rest (1 to 65535).
static inline int cmosq_set_send_maximum(struct mosquitto *mosq, int value) {
    return mosquitto_int_option(mosq, MOSQ_OPT_SEND_MAXIMUM, value);
}

#endif
