// RestConfig: everything needed to reach one API server over HTTP(S) (client-go's rest.Config).
//
// It is what a kubeconfig context resolves to (kubeconfig.h), and what NewHttpTransport
// (http_transport.h) and NewTransportForConfig (transport_factory.h) consume. File references
// of a kubeconfig (certificate-authority, client-certificate, client-key) are already read into
// the PEM fields; tokenFile stays a path, because a projected service-account token is rotated on
// disk and must be re-read.
//
// Thread-safety: a plain value.
#pragma once

#include <chrono>
#include <string>

namespace converge::client {

struct TlsConfig {
  // PEM bundle of certificate authorities that sign the server's certificate. Empty: the system
  // trust store.
  std::string ca_pem;
  // PEM client certificate (chain) and its private key, for mutual TLS. Both or neither.
  std::string client_cert_pem;
  std::string client_key_pem;
  // Skip verification of the server's certificate (kubeconfig insecure-skip-tls-verify). The
  // connection is still encrypted but not authenticated: for tests and first contact only.
  bool insecure_skip_verify = false;
  // The name to verify the server certificate against (and send as SNI) instead of the URL's
  // host (kubeconfig tls-server-name).
  std::string server_name;
};

struct RestConfig {
  // Base URL of the API server: "https://127.0.0.1:6443", optionally with a path prefix
  // ("https://proxy.example/k8s/clusters/c-1"). http:// is accepted for local test servers.
  std::string server;
  TlsConfig tls;
  // Bearer token sent as "Authorization: Bearer <token>". Takes precedence over token_file.
  std::string bearer_token;
  // A file holding the bearer token, re-read at most once a minute (service-account token
  // rotation, as client-go's cachingTokenSource does).
  std::string bearer_token_file;
  // The namespace of the kubeconfig context ("default" when it names none). Informational: the
  // REST client always takes namespaces explicitly.
  std::string ns = "default";
  // Client-side rate limit (token bucket): sustained requests per second and burst. qps <= 0
  // disables limiting, which is the default (client-go defaults to 5/10; Converge's own components
  // and simulations must not be capped by a hidden limit).
  double qps = 0;
  int burst = 0;
  // Upper bound for one non-streaming request, connect to last byte. Zero: no limit (client-go's
  // default; large lists may legitimately take long). Streams (watches, followed logs) carry their
  // own deadline per request.
  std::chrono::milliseconds timeout{0};
  // Sent as User-Agent.
  std::string user_agent = "converge-client/0.1";
};

}  // namespace converge::client
