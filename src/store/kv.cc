#include "store/kv.h"

#include <string>

namespace converge::store {

std::string PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  // Drop trailing 0xff bytes and increment the last remaining byte; an all-0xff (or empty)
  // prefix selects every key from `prefix` on, which etcd spells "\0".
  while (!end.empty()) {
    auto& c = reinterpret_cast<unsigned char&>(end.back());
    if (c < 0xff) {
      ++c;
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');
}

bool IsCompacted(const util::Status& s) {
  return s.code() == util::Code::kOutOfRange && s.message().find("compacted") != std::string::npos;
}

bool IsFutureRevision(const util::Status& s) {
  return s.code() == util::Code::kOutOfRange &&
         s.message().find("future revision") != std::string::npos;
}

util::Status CompactedError(Revision compact_revision) {
  return util::OutOfRange("mvcc: required revision has been compacted (compact revision " +
                          std::to_string(compact_revision) + ")");
}

util::Status FutureRevisionError(Revision requested, Revision current) {
  return util::OutOfRange("mvcc: required revision is a future revision (requested " +
                          std::to_string(requested) + ", current " + std::to_string(current) + ")");
}

}  // namespace converge::store
