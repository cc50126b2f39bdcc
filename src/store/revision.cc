#include "store/revision.h"

namespace converge::store {

namespace {

void PutBigEndian64(uint64_t v, char* out) {
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}

uint64_t GetBigEndian64(const char* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  return v;
}

}  // namespace

void EncodeRevisionKey(RevisionPair rev, char* out) {
  PutBigEndian64(static_cast<uint64_t>(rev.main), out);
  PutBigEndian64(static_cast<uint64_t>(rev.sub), out + 8);
}

std::string RevisionKey(RevisionPair rev) {
  std::string key(kRevisionKeySize, '\0');
  EncodeRevisionKey(rev, key.data());
  return key;
}

bool DecodeRevisionKey(std::string_view key, RevisionPair* rev) {
  if (key.size() != kRevisionKeySize) return false;
  rev->main = static_cast<Revision>(GetBigEndian64(key.data()));
  rev->sub = static_cast<int64_t>(GetBigEndian64(key.data() + 8));
  return true;
}

}  // namespace converge::store
