// libmicrohttpd and GnuTLS, loaded at run time by `cgov daemon --listen` (and `--tls-cert`)
// alone, and libcrypt and libyaml by `--web-config` alone: linked, they cost every cgov process ~4
// ms at exec and ~2.8 MB of RSS (GnuTLS and the six libraries it brings initialise at load), which
// a `cgov run` wrapping a job must not pay (docs/benchmarks.md, docs/architecture.md
// "Dependencies"). The headers are used for types and constants only; every call goes through the
// pointers resolved here.
#ifndef CGOV_EXPORT_HTTP_LIBRARIES_H_
#define CGOV_EXPORT_HTTP_LIBRARIES_H_

#include <crypt.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <yaml.h>

#include "core/status.h"

namespace cgov {

struct MicrohttpdLibrary {
  decltype(&MHD_start_daemon) start_daemon = nullptr;
  decltype(&MHD_stop_daemon) stop_daemon = nullptr;
  decltype(&MHD_is_feature_supported) is_feature_supported = nullptr;
  decltype(&MHD_create_response_from_buffer) create_response_from_buffer = nullptr;
  decltype(&MHD_add_response_header) add_response_header = nullptr;
  decltype(&MHD_queue_response) queue_response = nullptr;
  decltype(&MHD_queue_basic_auth_fail_response) queue_basic_auth_fail_response = nullptr;
  decltype(&MHD_destroy_response) destroy_response = nullptr;
  decltype(&MHD_lookup_connection_value) lookup_connection_value = nullptr;
  decltype(&MHD_lookup_connection_value_n) lookup_connection_value_n = nullptr;
  decltype(&MHD_get_connection_values) get_connection_values = nullptr;
  decltype(&MHD_get_connection_info) get_connection_info = nullptr;
};

// libmicrohttpd.so.12 (or `CGOV_LIBMICROHTTPD`, for tests), loaded once for the process;
// Unavailable, naming the package to install, when it cannot be. Thread-safe.
Result<const MicrohttpdLibrary*> LoadMicrohttpd();

struct GnutlsLibrary {
  decltype(&gnutls_x509_crt_init) crt_init = nullptr;
  decltype(&gnutls_x509_crt_deinit) crt_deinit = nullptr;
  decltype(&gnutls_x509_crt_import) crt_import = nullptr;
  decltype(&gnutls_x509_crt_get_activation_time) crt_get_activation_time = nullptr;
  decltype(&gnutls_x509_crt_get_expiration_time) crt_get_expiration_time = nullptr;
  decltype(&gnutls_x509_crt_get_dn3) crt_get_dn3 = nullptr;
  decltype(&gnutls_strerror) strerror = nullptr;
  gnutls_free_function* free = nullptr;  // a variable in GnuTLS: call (*free)(p)
};

// libgnutls.so.30 (or `CGOV_LIBGNUTLS`), as LoadMicrohttpd. Thread-safe.
Result<const GnutlsLibrary*> LoadGnutls();

struct CryptLibrary {
  decltype(&::crypt_r) crypt = nullptr;  // crypt_r
};

struct YamlLibrary {
  decltype(&yaml_parser_initialize) parser_initialize = nullptr;
  decltype(&yaml_parser_delete) parser_delete = nullptr;
  decltype(&yaml_parser_set_input_string) parser_set_input_string = nullptr;
  decltype(&yaml_parser_load) parser_load = nullptr;
  decltype(&yaml_parser_parse) parser_parse = nullptr;
  decltype(&yaml_event_delete) event_delete = nullptr;
  decltype(&yaml_document_delete) document_delete = nullptr;
  decltype(&yaml_document_get_root_node) document_get_root_node = nullptr;
  decltype(&yaml_document_get_node) document_get_node = nullptr;
};

// libcrypt.so.1 (libxcrypt: bcrypt; or `CGOV_LIBCRYPT`) and libyaml-0.so.2 (or `CGOV_LIBYAML`),
// as LoadMicrohttpd. Thread-safe.
Result<const CryptLibrary*> LoadCrypt();
Result<const YamlLibrary*> LoadYaml();

}  // namespace cgov

#endif  // CGOV_EXPORT_HTTP_LIBRARIES_H_
