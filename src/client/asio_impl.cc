// The compiled parts of Boost.Asio (with its SSL layer) and Boost.Beast, once for the whole tree.
//
// converge_client defines BOOST_ASIO_SEPARATE_COMPILATION and BOOST_BEAST_SEPARATE_COMPILATION for
// itself and everything that links it, so the translation units that include Asio or Beast (the
// HTTP server, the client transport, the test HTTP client) declare these functions instead of
// compiling their inline definitions each time: about a fifth of such a file's compile time
// (docs/PERFORMANCE.md, "Build and CI time"). This file stays out of the unity batches.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
