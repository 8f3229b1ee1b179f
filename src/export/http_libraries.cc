#include "export/http_libraries.h"

#include <string>

#include "os/shared_library.h"

namespace cgov {
namespace {

Result<MicrohttpdLibrary> OpenMicrohttpd() {
  return OpenLibrary<MicrohttpdLibrary>(
      {"libmicrohttpd", "libmicrohttpd.so.12", "CGOV_LIBMICROHTTPD", "--listen", "libmicrohttpd12"},
      [](SymbolResolver& resolve, MicrohttpdLibrary& lib) {
        resolve(&lib.start_daemon, "MHD_start_daemon");
        resolve(&lib.stop_daemon, "MHD_stop_daemon");
        resolve(&lib.is_feature_supported, "MHD_is_feature_supported");
        resolve(&lib.create_response_from_buffer, "MHD_create_response_from_buffer");
        resolve(&lib.add_response_header, "MHD_add_response_header");
        resolve(&lib.queue_response, "MHD_queue_response");
        resolve(&lib.queue_basic_auth_fail_response, "MHD_queue_basic_auth_fail_response");
        resolve(&lib.destroy_response, "MHD_destroy_response");
        resolve(&lib.lookup_connection_value, "MHD_lookup_connection_value");
        resolve(&lib.lookup_connection_value_n, "MHD_lookup_connection_value_n");
        resolve(&lib.get_connection_values, "MHD_get_connection_values");
        resolve(&lib.get_connection_info, "MHD_get_connection_info");
      });
}

Result<GnutlsLibrary> OpenGnutls() {
  return OpenLibrary<GnutlsLibrary>(
      {"GnuTLS", "libgnutls.so.30", "CGOV_LIBGNUTLS", "--tls-cert", "libgnutls30"},
      [](SymbolResolver& resolve, GnutlsLibrary& lib) {
        resolve(&lib.crt_init, "gnutls_x509_crt_init");
        resolve(&lib.crt_deinit, "gnutls_x509_crt_deinit");
        resolve(&lib.crt_import, "gnutls_x509_crt_import");
        resolve(&lib.crt_get_activation_time, "gnutls_x509_crt_get_activation_time");
        resolve(&lib.crt_get_expiration_time, "gnutls_x509_crt_get_expiration_time");
        resolve(&lib.crt_get_dn3, "gnutls_x509_crt_get_dn3");
        resolve(&lib.strerror, "gnutls_strerror");
        resolve(&lib.free, "gnutls_free");
      });
}

Result<CryptLibrary> OpenCrypt() {
  return OpenLibrary<CryptLibrary>(
      {"libcrypt", "libcrypt.so.1", "CGOV_LIBCRYPT", "--web-config", "libcrypt1"},
      [](SymbolResolver& resolve, CryptLibrary& lib) { resolve(&lib.crypt, "crypt_r"); });
}

Result<YamlLibrary> OpenYaml() {
  return OpenLibrary<YamlLibrary>(
      {"libyaml", "libyaml-0.so.2", "CGOV_LIBYAML", "--web-config", "libyaml-0-2"},
      [](SymbolResolver& resolve, YamlLibrary& lib) {
        resolve(&lib.parser_initialize, "yaml_parser_initialize");
        resolve(&lib.parser_delete, "yaml_parser_delete");
        resolve(&lib.parser_set_input_string, "yaml_parser_set_input_string");
        resolve(&lib.parser_load, "yaml_parser_load");
        resolve(&lib.parser_parse, "yaml_parser_parse");
        resolve(&lib.event_delete, "yaml_event_delete");
        resolve(&lib.document_delete, "yaml_document_delete");
        resolve(&lib.document_get_root_node, "yaml_document_get_root_node");
        resolve(&lib.document_get_node, "yaml_document_get_node");
      });
}

}  // namespace

Result<const MicrohttpdLibrary*> LoadMicrohttpd() { return LoadOnce(&OpenMicrohttpd); }
Result<const GnutlsLibrary*> LoadGnutls() { return LoadOnce(&OpenGnutls); }
Result<const CryptLibrary*> LoadCrypt() { return LoadOnce(&OpenCrypt); }
Result<const YamlLibrary*> LoadYaml() { return LoadOnce(&OpenYaml); }

}  // namespace cgov
