#include "store/backend.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace converge::store {

namespace {

constexpr char kDataFile[] = "data.mdb";
constexpr char kFormatFile[] = "FORMAT";
constexpr char kLockFile[] = "LOCK";
constexpr size_t kMaxPooledReaders = 64;

std::string Errno(std::string_view what, const std::string& path) {
  return std::string(what) + " " + path + ": " + std::strerror(errno);
}

// Writes `contents` to dir/name durably: temporary file, fsync, rename, fsync of the directory.
util::Status WriteFileDurably(const std::string& dir, const std::string& name,
                              const std::string& contents) {
  const std::string tmp = dir + "/" + name + ".tmp";
  const std::string path = dir + "/" + name;
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return util::Internal(Errno("store: create", tmp));
  const bool ok =
      ::write(fd, contents.data(), contents.size()) == static_cast<ssize_t>(contents.size()) &&
      ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) return util::Internal(Errno("store: write", tmp));
  if (::rename(tmp.c_str(), path.c_str()) != 0) return util::Internal(Errno("store: rename", tmp));
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return util::Status::Ok();
}

MDB_val Val(std::string_view s) {
  return MDB_val{s.size(), const_cast<char*>(s.data())};
}

std::string_view View(const MDB_val& v) {
  return std::string_view(static_cast<const char*>(v.mv_data), v.mv_size);
}

}  // namespace

util::Status LmdbStatus(int rc, std::string_view what) {
  if (rc == 0) return util::Status::Ok();
  std::string message = "store: " + std::string(what) + ": " + mdb_strerror(rc);
  switch (rc) {
    case MDB_CORRUPTED:
    case MDB_PAGE_NOTFOUND:
    case MDB_INVALID:
    case MDB_VERSION_MISMATCH:
    case MDB_BAD_VALSIZE: return util::DataLoss(std::move(message));
    case MDB_MAP_FULL: return util::ResourceExhausted(std::move(message));
    case MDB_READERS_FULL: return util::Unavailable(std::move(message));
    default: return util::Internal(std::move(message));
  }
}

util::StatusOr<std::unique_ptr<Backend>> Backend::Open(const Options& options) {
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec) return util::Internal("store: create " + options.dir + ": " + ec.message());
  std::unique_ptr<Backend> b(new Backend(options));

  const std::string lock_path = options.dir + "/" + kLockFile;
  b->lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (b->lock_fd_ < 0) return util::Internal(Errno("store: open", lock_path));
  if (::flock(b->lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    return util::FailedPrecondition("store: " + options.dir +
                                    " is in use by another process (LOCK is held)");
  }

  const std::string data_path = options.dir + "/" + kDataFile;
  const std::string format_path = options.dir + "/" + kFormatFile;
  struct stat st {};
  const bool data_exists = ::stat(data_path.c_str(), &st) == 0;
  const uint64_t data_size = data_exists ? static_cast<uint64_t>(st.st_size) : 0;
  const bool initialized = std::filesystem::exists(format_path);
  if (initialized) {
    std::ifstream in(format_path);
    std::string magic;
    uint64_t version = 0;
    in >> magic >> version;
    if (magic != "converge-store") {
      return util::DataLoss("store: " + format_path + " is not a Converge store FORMAT file");
    }
    if (version != kFormatVersion && version != 1) {
      return util::FailedPrecondition("store: unsupported format version " +
                                      std::to_string(version) + " in " + options.dir +
                                      " (this build reads " + std::to_string(kFormatVersion) + ")");
    }
    if (!data_exists || data_size == 0) {
      return util::DataLoss("store: " + data_path + " is missing or empty but " + format_path +
                            " says the store was initialized");
    }
  } else if (data_exists && data_size == 0) {
    // A crash during the very first open left an empty file: start over.
    std::filesystem::remove(data_path, ec);
  }

  CONVERGE_RETURN_IF_ERROR(b->OpenEnv());
  CONVERGE_RETURN_IF_ERROR(b->CheckFileLength());

  // Open (or create) the dbs and check or write the format record.
  MDB_txn* txn = nullptr;
  CONVERGE_RETURN_IF_ERROR(LmdbStatus(mdb_txn_begin(b->env_, nullptr, 0, &txn), "begin"));
  const unsigned create = initialized ? 0 : MDB_CREATE;
  int rc = mdb_dbi_open(txn, "history", create, &b->history_);
  if (rc == 0) rc = mdb_dbi_open(txn, "meta", create, &b->meta_);
  if (rc == MDB_NOTFOUND) {
    mdb_txn_abort(txn);
    return util::DataLoss("store: " + data_path + " lacks the history or meta db");
  }
  if (rc != 0) {
    mdb_txn_abort(txn);
    return LmdbStatus(rc, "open dbs");
  }
  uint64_t format = 0;
  util::Status st_format = b->GetMeta(txn, kMetaFormat, &format);
  if (st_format.code() == util::Code::kNotFound) {
    if (initialized) {
      mdb_txn_abort(txn);
      return util::DataLoss("store: " + data_path + " lacks its format record");
    }
    util::Status init = b->PutMeta(txn, kMetaFormat, kFormatVersion);
    for (const char* name : {kMetaCurrentRevision, kMetaScheduledCompact, kMetaFinishedCompact,
                             kMetaRecordCount, kMetaLogApplied}) {
      if (init.ok()) init = b->PutMeta(txn, name, 0);
    }
    if (!init.ok()) {
      mdb_txn_abort(txn);
      return init;
    }
  } else if (!st_format.ok()) {
    mdb_txn_abort(txn);
    return st_format;
  } else if (format == 1) {
    // Upgrade: version 1 had no log. The FORMAT file follows once this is durable.
    util::Status up = b->PutMeta(txn, kMetaFormat, kFormatVersion);
    if (up.ok()) up = b->PutMeta(txn, kMetaLogApplied, 0);
    if (!up.ok()) {
      mdb_txn_abort(txn);
      return up;
    }
  } else if (format != kFormatVersion) {
    mdb_txn_abort(txn);
    return util::FailedPrecondition("store: unsupported format version " + std::to_string(format) +
                                    " in " + data_path);
  }
  CONVERGE_RETURN_IF_ERROR(b->Commit(txn));
  if (!initialized || format == 1) {
    // The environment must be durable before FORMAT claims it exists.
    if (options.fsync) CONVERGE_RETURN_IF_ERROR(LmdbStatus(mdb_env_sync(b->env_, 1), "sync"));
    CONVERGE_RETURN_IF_ERROR(WriteFileDurably(
        options.dir, kFormatFile, "converge-store " + std::to_string(kFormatVersion) + "\n"));
  }
  return b;
}

util::Status Backend::OpenEnv() {
  CONVERGE_RETURN_IF_ERROR(LmdbStatus(mdb_env_create(&env_), "env create"));
  CONVERGE_RETURN_IF_ERROR(LmdbStatus(mdb_env_set_maxdbs(env_, 2), "set maxdbs"));
  CONVERGE_RETURN_IF_ERROR(LmdbStatus(mdb_env_set_mapsize(env_, options_.map_size), "mapsize"));
  CONVERGE_RETURN_IF_ERROR(
      LmdbStatus(mdb_env_set_maxreaders(env_, options_.max_readers), "set maxreaders"));
  unsigned flags = MDB_NOTLS;
  flags |= options_.fsync ? MDB_NOMETASYNC : MDB_NOSYNC;
  int rc = mdb_env_open(env_, options_.dir.c_str(), flags, 0644);
  if (rc != 0) {
    mdb_env_close(env_);
    env_ = nullptr;
    // A file too short for its header is MDB_INVALID (DataLoss); ENOMEM/EINVAL mean the map
    // could not be created (map_size too large for the address space).
    if (rc == ENOMEM || rc == EINVAL) {
      return util::ResourceExhausted("store: cannot map " + options_.dir + " with map_size " +
                                     std::to_string(options_.map_size) + ": " + mdb_strerror(rc));
    }
    return LmdbStatus(rc, "open " + options_.dir);
  }
  int dead = 0;
  mdb_reader_check(env_, &dead);  // clear reader slots of crashed processes
  return util::Status::Ok();
}

util::Status Backend::CheckFileLength() {
  MDB_envinfo info{};
  MDB_stat stat{};
  CONVERGE_RETURN_IF_ERROR(LmdbStatus(mdb_env_info(env_, &info), "env info"));
  CONVERGE_RETURN_IF_ERROR(LmdbStatus(mdb_env_stat(env_, &stat), "env stat"));
  const std::string data_path = options_.dir + "/" + kDataFile;
  struct stat st {};
  if (::stat(data_path.c_str(), &st) != 0) return util::Internal(Errno("store: stat", data_path));
  const uint64_t need = (static_cast<uint64_t>(info.me_last_pgno) + 1) * stat.ms_psize;
  if (static_cast<uint64_t>(st.st_size) < need) {
    return util::DataLoss("store: " + data_path + " is truncated: " + std::to_string(st.st_size) +
                          " bytes, but its newest meta page uses " + std::to_string(need));
  }
  return util::Status::Ok();
}

Backend::~Backend() {
  for (MDB_txn* txn : read_pool_) mdb_txn_abort(txn);
  if (env_ != nullptr) mdb_env_close(env_);
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

Backend::ReadTxn::~ReadTxn() {
  if (txn_ == nullptr) return;
  mdb_txn_reset(txn_);
  {
    std::lock_guard lock(backend_->pool_mu_);
    if (backend_->read_pool_.size() < kMaxPooledReaders) {
      backend_->read_pool_.push_back(txn_);
      return;
    }
  }
  mdb_txn_abort(txn_);
}

util::StatusOr<Backend::ReadTxn> Backend::BeginRead() {
  MDB_txn* txn = nullptr;
  {
    std::lock_guard lock(pool_mu_);
    if (!read_pool_.empty()) {
      txn = read_pool_.back();
      read_pool_.pop_back();
    }
  }
  if (txn != nullptr) {
    if (mdb_txn_renew(txn) == 0) return ReadTxn(this, txn);
    mdb_txn_abort(txn);
    txn = nullptr;
  }
  CONVERGE_RETURN_IF_ERROR(
      LmdbStatus(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn), "begin read"));
  return ReadTxn(this, txn);
}

util::StatusOr<MDB_txn*> Backend::BeginWrite() {
  MDB_txn* txn = nullptr;
  CONVERGE_RETURN_IF_ERROR(LmdbStatus(mdb_txn_begin(env_, nullptr, 0, &txn), "begin write"));
  return txn;
}

util::Status Backend::Commit(MDB_txn* txn) {
  return LmdbStatus(mdb_txn_commit(txn), "commit");
}

void Backend::Abort(MDB_txn* txn) {
  mdb_txn_abort(txn);
}

util::Status Backend::Sync() {
  if (!options_.fsync) return util::Status::Ok();
  return LmdbStatus(mdb_env_sync(env_, 1), "sync");
}

util::Status Backend::UsedAndFileBytes(uint64_t* used, uint64_t* file) const {
  MDB_envinfo info{};
  MDB_stat stat{};
  CONVERGE_RETURN_IF_ERROR(LmdbStatus(mdb_env_info(env_, &info), "env info"));
  CONVERGE_RETURN_IF_ERROR(LmdbStatus(mdb_env_stat(env_, &stat), "env stat"));
  int fd = -1;
  CONVERGE_RETURN_IF_ERROR(LmdbStatus(mdb_env_get_fd(env_, &fd), "env fd"));
  struct stat st {};
  if (::fstat(fd, &st) != 0) return util::Internal(Errno("store: fstat", options_.dir));
  *used = (static_cast<uint64_t>(info.me_last_pgno) + 1) * stat.ms_psize;
  *file = static_cast<uint64_t>(st.st_size);
  return util::Status::Ok();
}

bool Backend::NeedsSpace() {
  if (!options_.fsync || options_.reserve_bytes == 0 || reserve_off_) return false;
  uint64_t used = 0;
  uint64_t file = 0;
  if (!UsedAndFileBytes(&used, &file).ok()) return false;
  return file < used + options_.reserve_bytes;
}

util::Status Backend::ReserveSpace() {
  uint64_t used = 0;
  uint64_t file = 0;
  CONVERGE_RETURN_IF_ERROR(UsedAndFileBytes(&used, &file));
  int fd = -1;
  CONVERGE_RETURN_IF_ERROR(LmdbStatus(mdb_env_get_fd(env_, &fd), "env fd"));
  // From the file's end: at or past LMDB's last page (LMDB writes a page before any meta page
  // refers to it), so no page of any snapshot is touched.
  const uint64_t start = std::max(used, file);
  const std::vector<char> zeros(options_.reserve_bytes, '\0');
  for (size_t done = 0; done < zeros.size();) {
    const ssize_t n =
        ::pwrite(fd, zeros.data() + done, zeros.size() - done, static_cast<off_t>(start + done));
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      reserve_off_ = true;  // LMDB will report a full disk itself when it needs the space
      break;
    }
    done += static_cast<size_t>(n);
  }
  // LMDB's own sync (fdatasync on this kernel): the zeros and every commit so far.
  return LmdbStatus(mdb_env_sync(env_, 1), "sync");
}

util::Status Backend::GetRecord(MDB_txn* txn, RevisionPair rev, RecordView* out) const {
  char key[kRevisionKeySize];
  EncodeRevisionKey(rev, key);
  MDB_val k{sizeof(key), key};
  MDB_val v{};
  const int rc = mdb_get(txn, history_, &k, &v);
  if (rc == MDB_NOTFOUND) {
    return util::NotFound("store: no record at revision " + std::to_string(rev.main) + "." +
                          std::to_string(rev.sub));
  }
  CONVERGE_RETURN_IF_ERROR(LmdbStatus(rc, "get record"));
  return DecodeRecord(rev, View(v), out);
}

util::Status Backend::PutRecord(MDB_txn* txn, RevisionPair rev, const RecordView& record) {
  char key[kRevisionKeySize];
  EncodeRevisionKey(rev, key);
  MDB_val k{sizeof(key), key};
  MDB_val v{EncodedRecordSize(record), nullptr};
  // Revisions only grow, so every record is appended at the end of the tree.
  CONVERGE_RETURN_IF_ERROR(
      LmdbStatus(mdb_put(txn, history_, &k, &v, MDB_RESERVE | MDB_APPEND), "put record"));
  EncodeRecord(rev, record, static_cast<char*>(v.mv_data));
  return util::Status::Ok();
}

util::Status Backend::PutRecordBytes(MDB_txn* txn, RevisionPair rev, std::string_view bytes) {
  char key[kRevisionKeySize];
  EncodeRevisionKey(rev, key);
  MDB_val k{sizeof(key), key};
  MDB_val v = Val(bytes);
  return LmdbStatus(mdb_put(txn, history_, &k, &v, MDB_APPEND), "put record");
}

uint64_t Backend::UsedBytes() const {
  MDB_envinfo info{};
  MDB_stat stat{};
  if (mdb_env_info(env_, &info) != 0 || mdb_env_stat(env_, &stat) != 0) return 0;
  return (static_cast<uint64_t>(info.me_last_pgno) + 1) * stat.ms_psize;
}

util::Status Backend::DeleteRecord(MDB_txn* txn, RevisionPair rev) {
  char key[kRevisionKeySize];
  EncodeRevisionKey(rev, key);
  MDB_val k{sizeof(key), key};
  const int rc = mdb_del(txn, history_, &k, nullptr);
  if (rc == MDB_NOTFOUND) return util::NotFound("store: no record to delete");
  return LmdbStatus(rc, "delete record");
}

util::Status Backend::GetMeta(MDB_txn* txn, std::string_view name, uint64_t* value) const {
  MDB_val k = Val(name);
  MDB_val v{};
  const int rc = mdb_get(txn, meta_, &k, &v);
  if (rc == MDB_NOTFOUND) return util::NotFound("store: no meta " + std::string(name));
  CONVERGE_RETURN_IF_ERROR(LmdbStatus(rc, "get meta"));
  return DecodeMetaU64(name, View(v), value);
}

util::Status Backend::PutMeta(MDB_txn* txn, std::string_view name, uint64_t value) {
  const std::string bytes = EncodeMetaU64(name, value);
  MDB_val k = Val(name);
  MDB_val v = Val(bytes);
  return LmdbStatus(mdb_put(txn, meta_, &k, &v, 0), "put meta");
}

util::StatusOr<Backend::HistoryCursor> Backend::OpenHistoryCursor(MDB_txn* txn) const {
  MDB_cursor* cursor = nullptr;
  CONVERGE_RETURN_IF_ERROR(LmdbStatus(mdb_cursor_open(txn, history_, &cursor), "cursor"));
  return HistoryCursor(cursor);
}

util::StatusOr<uint64_t> Backend::HistoryEntries(MDB_txn* txn) const {
  MDB_stat stat{};
  CONVERGE_RETURN_IF_ERROR(LmdbStatus(mdb_stat(txn, history_, &stat), "stat"));
  return static_cast<uint64_t>(stat.ms_entries);
}

Backend::HistoryCursor::~HistoryCursor() {
  if (cursor_ != nullptr) mdb_cursor_close(cursor_);
}

util::StatusOr<bool> Backend::HistoryCursor::Load(int rc) {
  if (rc == MDB_NOTFOUND) return false;
  CONVERGE_RETURN_IF_ERROR(LmdbStatus(rc, "cursor"));
  return true;
}

util::StatusOr<bool> Backend::HistoryCursor::Seek(RevisionPair rev) {
  char key[kRevisionKeySize];
  EncodeRevisionKey(rev, key);
  MDB_val k{sizeof(key), key};
  MDB_val v{};
  CONVERGE_ASSIGN_OR_RETURN(bool found, Load(mdb_cursor_get(cursor_, &k, &v, MDB_SET_RANGE)));
  if (!found) return false;
  if (!DecodeRevisionKey(View(k), &rev_)) return util::DataLoss("store: bad history key size");
  bytes_ = View(v);
  return true;
}

namespace {

util::StatusOr<bool> Step(MDB_cursor* cursor, MDB_cursor_op op, RevisionPair* rev,
                          std::string_view* bytes) {
  MDB_val k{};
  MDB_val v{};
  const int rc = mdb_cursor_get(cursor, &k, &v, op);
  if (rc == MDB_NOTFOUND) return false;
  CONVERGE_RETURN_IF_ERROR(LmdbStatus(rc, "cursor"));
  if (!DecodeRevisionKey(View(k), rev)) return util::DataLoss("store: bad history key size");
  *bytes = View(v);
  return true;
}

}  // namespace

util::StatusOr<bool> Backend::HistoryCursor::First() {
  return Step(cursor_, MDB_FIRST, &rev_, &bytes_);
}
util::StatusOr<bool> Backend::HistoryCursor::Last() {
  return Step(cursor_, MDB_LAST, &rev_, &bytes_);
}
util::StatusOr<bool> Backend::HistoryCursor::Next() {
  return Step(cursor_, MDB_NEXT, &rev_, &bytes_);
}

}  // namespace converge::store
