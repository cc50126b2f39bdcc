// Names the calling thread, so that `top -H`, `perf report --sort comm`, gdb and
// /proc/PID/task/*/comm tell the server's threads apart. Linux keeps 15 characters; longer
// names are cut.
//
// Thread-safety: affects only the calling thread.
#pragma once

#include <string_view>

namespace converge::util {

void SetThreadName(std::string_view name);

}  // namespace converge::util
