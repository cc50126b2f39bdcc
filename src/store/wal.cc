#include "store/wal.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>

#include "util/thread_name.h"

namespace converge::store {

namespace {

constexpr char kWalDir[] = "wal";
constexpr char kSuffix[] = ".wal";
constexpr char kTmpSuffix[] = ".tmp";
constexpr size_t kZeroChunk = size_t{1} << 20;
// How long the preparer waits for a full segment to become obsolete before it makes a new one.
constexpr std::chrono::milliseconds kWaitForObsolete(200);

std::string WalErrno(std::string_view what, const std::string& path) {
  return "store: " + std::string(what) + " " + path + ": " + std::strerror(errno);
}

// False with errno set on failure.
bool WriteAll(int fd, const char* data, size_t n, size_t offset) {
  for (size_t done = 0; done < n;) {
    const ssize_t w = ::pwrite(fd, data + done, n - done, static_cast<off_t>(offset + done));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return false;
    if (w == 0) {
      errno = ENOSPC;
      return false;
    }
    done += static_cast<size_t>(w);
  }
  return true;
}

util::Status FsyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return util::Internal(WalErrno("open", dir));
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return util::Internal(WalErrno("fsync", dir));
  return util::Status::Ok();
}

// "<16 hex digits>.wal" -> the number.
bool ParseSegmentName(const std::string& name, uint64_t* number) {
  if (name.size() != 16 + std::strlen(kSuffix) || name.compare(16, std::string::npos, kSuffix) != 0)
    return false;
  uint64_t n = 0;
  for (size_t i = 0; i < 16; ++i) {
    const char c = name[i];
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else {
      return false;
    }
    n = (n << 4) | static_cast<uint64_t>(d);
  }
  *number = n;
  return true;
}

uint64_t NewSalt() {
  static std::mutex mu;
  static std::mt19937_64 rng(
      std::random_device{}() ^
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  std::lock_guard lock(mu);
  uint64_t salt = 0;
  while (salt == 0) salt = rng();
  return salt;
}

// The offset of the first intact Begin or end record of `salt` at or after `from` (aligned),
// else segment.size(); its sequence number goes to *seq.
size_t FindIntact(std::string_view segment, size_t from, uint64_t salt, uint64_t* seq) {
  for (size_t probe = from; probe < segment.size(); probe += wal::kGroupAlign) {
    if (wal::BeginAt(segment, probe, salt, seq) || wal::EndAt(segment, probe, salt, seq)) {
      return probe;
    }
  }
  return segment.size();
}

const std::string& Zeros() {
  static const std::string zeros(kZeroChunk, '\0');
  return zeros;
}

}  // namespace

Wal::Wal(Options options) : options_(std::move(options)), wal_dir_(options_.dir + "/" + kWalDir) {}

Wal::~Wal() {
  Stop();
  auto close_all = [](std::deque<Segment>& segments) {
    for (Segment& s : segments) {
      if (s.fd >= 0) ::close(s.fd);
    }
    segments.clear();
  };
  close_all(spares_);
  close_all(full_);
  close_all(obsolete_);
  if (current_.fd >= 0) ::close(current_.fd);
}

std::string Wal::Path(uint64_t number) const {
  char name[17];
  std::snprintf(name, sizeof(name), "%016llx", static_cast<unsigned long long>(number));
  return wal_dir_ + "/" + name + kSuffix;
}

util::StatusOr<std::unique_ptr<Wal>> Wal::Open(const Options& options, uint64_t applied_seq,
                                               Recovered* recovered) {
  std::unique_ptr<Wal> wal(new Wal(options));
  *recovered = Recovered{};
  std::vector<uint64_t> numbers;
  if (DIR* d = ::opendir(wal->wal_dir_.c_str())) {
    while (dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      uint64_t number = 0;
      if (ParseSegmentName(name, &number)) {
        numbers.push_back(number);
      } else if (name.size() > 4 && name.ends_with(kTmpSuffix)) {
        ::unlink((wal->wal_dir_ + "/" + name).c_str());  // a segment never completed
      }
    }
    ::closedir(d);
  } else if (errno != ENOENT) {
    return util::Internal(WalErrno("open", wal->wal_dir_));
  }
  std::sort(numbers.begin(), numbers.end());

  // Every segment with at least one intact group, in log order afterwards.
  struct Scanned {
    Segment segment;
    std::shared_ptr<const void> mapping;
    std::vector<wal::GroupView> groups;
    std::string torn;  // an intact Begin where the intact groups end
  };
  std::vector<Scanned> used;
  for (uint64_t number : numbers) {
    wal->next_number_ = std::max(wal->next_number_, number + 1);
    const std::string path = wal->Path(number);
    Segment seg;
    seg.fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (seg.fd < 0) return util::Internal(WalErrno("open", path));
    // From here on `seg` owns the fd: every path keeps it in a list the destructor closes.
    struct stat st {};
    if (::fstat(seg.fd, &st) != 0) {
      ::close(seg.fd);
      return util::Internal(WalErrno("stat", path));
    }
    const auto size = static_cast<size_t>(st.st_size);
    seg.number = number;
    seg.size = size;
    if (size < wal::kSegmentHeaderBytes) {
      ::close(seg.fd);
      return util::DataLoss("store: log segment " + path + " is truncated (" +
                            std::to_string(size) + " bytes)");
    }
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, seg.fd, 0);
    if (map == MAP_FAILED) {
      ::close(seg.fd);
      return util::Internal(WalErrno("mmap", path));
    }
    std::shared_ptr<const void> mapping(
        map, [size](const void* p) { ::munmap(const_cast<void*>(p), size); });
    const std::string_view bytes(static_cast<const char*>(map), size);
    wal::SegmentHeader header;
    if (!wal::DecodeSegmentHeader(bytes, &header)) {
      ::close(seg.fd);
      return util::DataLoss("store: log segment " + path + " has a corrupt header");
    }
    if (header.number != number) {
      // Being recycled when the process stopped: it held only applied groups.
      wal->obsolete_.push_back(seg);
      continue;
    }
    if (header.size != size) {
      ::close(seg.fd);
      return util::DataLoss("store: log segment " + path + " is " + std::to_string(size) +
                            " bytes long but its header says " + std::to_string(header.size));
    }
    seg.salt = header.salt;
    if (!header.in_use) {
      // A spare: no group of its salt was ever acknowledged.
      seg.written = wal::kSegmentHeaderBytes;
      wal->full_.push_back(seg);
      continue;
    }
    seg.in_use = true;
    Scanned scanned{seg, mapping, {}, {}};
    size_t at = wal::kSegmentHeaderBytes;
    while (at < size) {
      wal::GroupView g;
      std::string why;
      if (!wal::ParseGroup(bytes, at, header.salt, &g, &why)) {
        uint64_t seq = 0;
        const uint64_t next = scanned.groups.empty() ? 0 : scanned.groups.back().seq + 1;
        if (wal::EndAt(bytes, at, header.salt, &seq) && (next == 0 || seq == next)) break;
        // Anything intact further on means the damage is in the middle of the log, with one
        // exception: the writer writes the next group while the previous one's fdatasync runs
        // (Committer's pipeline), so a crash may persist that next group and not all of the
        // one before it. Neither was acknowledged (the next one's fdatasync would have covered
        // both): a damaged group followed by exactly one intact group, its successor, and
        // nothing intact after that, is a torn tail of two groups.
        size_t probe = FindIntact(bytes, at + wal::kGroupAlign, header.salt, &seq);
        std::string second;
        if (probe < size && !wal::EndAt(bytes, probe, header.salt, &seq)) {
          wal::GroupView after;
          std::string after_why;
          uint64_t ignored = 0;
          if (wal::ParseGroup(bytes, probe, header.salt, &after, &after_why) &&
              (next == 0 || after.seq == next + 1) &&
              FindIntact(bytes, probe + after.span, header.salt, &ignored) >= size) {
            second = " (and the unacknowledged group " + std::to_string(after.seq) +
                     " after it, at offset " + std::to_string(probe) + ")";
            probe = size;
          }
        }
        if (probe < size) {
          wal->full_.push_back(seg);
          return util::DataLoss("store: log segment " + path + " is corrupt in the middle: " + why +
                                ", but a later record (group " + std::to_string(seq) +
                                ") follows intact at offset " + std::to_string(probe));
        }
        if (wal::BeginAt(bytes, at, header.salt, &seq)) {
          scanned.torn = "group " + std::to_string(seq) + " at offset " + std::to_string(at) +
                         " of " + path + ": " + why + second;
        } else if (!second.empty()) {
          scanned.torn =
              "the group at offset " + std::to_string(at) + " of " + path + ": " + why + second;
        }
        break;
      }
      if (!scanned.groups.empty() && g.seq != scanned.groups.back().seq + 1) {
        wal->full_.push_back(seg);
        return util::DataLoss("store: log segment " + path + " holds group " +
                              std::to_string(g.seq) + " after group " +
                              std::to_string(scanned.groups.back().seq));
      }
      at += g.span;
      scanned.groups.push_back(std::move(g));
    }
    scanned.segment.write_pos = at;
    scanned.segment.written = at;  // at least; the rest may be unwritten extents
    if (scanned.groups.empty()) {
      // A spare, or a segment whose first group was torn: nothing to replay.
      if (!scanned.torn.empty()) recovered->torn_tail = scanned.torn;
      wal->full_.push_back(scanned.segment);
      continue;
    }
    scanned.segment.last_seq = scanned.groups.back().seq;
    used.push_back(std::move(scanned));
  }

  std::sort(used.begin(), used.end(), [](const Scanned& a, const Scanned& b) {
    return a.groups.front().seq < b.groups.front().seq;
  });
  for (const Scanned& s : used) wal->full_.push_back(s.segment);
  if (used.empty()) return wal;
  recovered->last_seq = used.back().groups.back().seq;
  if (!used.back().torn.empty()) recovered->torn_tail = used.back().torn;
  // The segments holding groups LMDB lacks must hold all of them, without a gap. (Segments of
  // applied groups only may be gone or half recycled: nothing needs them.)
  std::vector<const Scanned*> needed;
  for (const Scanned& s : used) {
    if (s.groups.back().seq > applied_seq) needed.push_back(&s);
  }
  for (size_t i = 0; i < needed.size(); ++i) {
    const uint64_t expect = i == 0 ? applied_seq + 1 : needed[i - 1]->groups.back().seq + 1;
    const uint64_t first = needed[i]->groups.front().seq;
    if (first > expect) {
      return util::DataLoss("store: the log is missing groups " + std::to_string(expect) + " to " +
                            std::to_string(first - 1) + " (the data file holds up to group " +
                            std::to_string(applied_seq) + "; " +
                            wal->Path(needed[i]->segment.number) + " begins at group " +
                            std::to_string(first) + ")");
    }
    if (i > 0 && first < expect) {
      return util::DataLoss("store: log segments " + wal->Path(needed[i - 1]->segment.number) +
                            " and " + wal->Path(needed[i]->segment.number) + " overlap at group " +
                            std::to_string(first));
    }
    // Only the newest segment may end in a torn group: the writer moves on only after the
    // last group of a segment is durable.
    if (i + 1 < needed.size() && !needed[i]->torn.empty()) {
      return util::DataLoss("store: the log is corrupt in the middle: " + needed[i]->torn +
                            ", but later segments hold intact groups");
    }
  }
  for (Scanned& s : used) {
    for (wal::GroupView& g : s.groups) {
      if (g.seq > applied_seq) recovered->groups.push_back(RecoveredGroup{s.mapping, std::move(g)});
    }
  }
  return wal;
}

util::Status Wal::SyncDir() {
  if (!options_.fsync) return util::Status::Ok();
  return FsyncDir(wal_dir_);
}

util::StatusOr<Wal::Segment> Wal::Create(uint64_t number, size_t size) {
  size = wal::AlignUp(std::max(size, wal::kSegmentHeaderBytes + wal::kGroupAlign));
  const std::string path = Path(number);
  const std::string tmp = path + kTmpSuffix;
  Segment seg;
  seg.number = number;
  seg.size = size;
  seg.salt = NewSalt();
  seg.written = wal::kSegmentHeaderBytes;
  seg.fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (seg.fd < 0) return util::Internal(WalErrno("create", tmp));
  auto fail = [&](util::Status st) {
    ::close(seg.fd);
    ::unlink(tmp.c_str());
    return st;
  };
  // Reserve the blocks (a full disk shows here, not in the middle of a group) and fix the size.
  if (::fallocate(seg.fd, 0, 0, static_cast<off_t>(size)) != 0) {
    if (errno != EOPNOTSUPP) return fail(util::ResourceExhausted(WalErrno("fallocate", tmp)));
    if (::ftruncate(seg.fd, static_cast<off_t>(size)) != 0)
      return fail(util::Internal(WalErrno("truncate", tmp)));
  }
  const std::string header = wal::EncodeSegmentHeader({number, seg.salt, size, false});
  if (!WriteAll(seg.fd, header.data(), header.size(), 0)) {
    return fail(util::Internal(WalErrno("write", tmp)));
  }
  if (options_.fsync && ::fdatasync(seg.fd) != 0)
    return fail(util::Internal(WalErrno("sync", tmp)));
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return fail(util::Internal(WalErrno("rename", tmp)));
  CONVERGE_RETURN_IF_ERROR(SyncDir());
  return seg;
}

util::Status Wal::Recycle(Segment* seg, uint64_t number) {
  const std::string from = Path(seg->number);
  const uint64_t salt = NewSalt();
  const std::string header = wal::EncodeSegmentHeader({number, salt, seg->size, false});
  if (!WriteAll(seg->fd, header.data(), header.size(), 0)) {
    return util::Internal(WalErrno("write", from));
  }
  if (options_.fsync && ::fdatasync(seg->fd) != 0) return util::Internal(WalErrno("sync", from));
  const std::string to = Path(number);
  if (::rename(from.c_str(), to.c_str()) != 0) return util::Internal(WalErrno("rename", from));
  CONVERGE_RETURN_IF_ERROR(SyncDir());
  seg->number = number;
  seg->salt = salt;
  seg->write_pos = wal::kSegmentHeaderBytes;
  seg->last_seq = 0;
  seg->in_use = false;
  return util::Status::Ok();
}

util::Status Wal::Start(uint64_t next_seq) {
  std::error_code ec;
  if (!std::filesystem::exists(wal_dir_)) {
    std::filesystem::create_directories(wal_dir_, ec);
    if (ec) return util::Internal("store: create " + wal_dir_ + ": " + ec.message());
    if (options_.fsync) CONVERGE_RETURN_IF_ERROR(FsyncDir(options_.dir));
  }
  next_seq_ = next_seq;
  std::optional<Segment> reuse;
  uint64_t number = 0;
  {
    std::lock_guard lock(mu_);
    // Everything found at Open is durable in LMDB now.
    while (!full_.empty()) {
      obsolete_.push_back(full_.front());
      full_.pop_front();
    }
    // Reuse one of the right size, the most written.
    for (auto it = obsolete_.begin(); it != obsolete_.end(); ++it) {
      if (it->size == wal::AlignUp(options_.segment_bytes) &&
          (!reuse || it->written > reuse->written)) {
        reuse = *it;
      }
    }
    if (reuse) {
      obsolete_.erase(std::find_if(obsolete_.begin(), obsolete_.end(),
                                   [&](const Segment& s) { return s.number == reuse->number; }));
    }
    number = next_number_++;
    running_ = true;
  }
  if (reuse) {
    util::Status st = Recycle(&*reuse, number);
    if (!st.ok()) {
      ::close(reuse->fd);
      return st;
    }
    current_ = *reuse;
  } else {
    CONVERGE_ASSIGN_OR_RETURN(current_, Create(number, options_.segment_bytes));
    std::lock_guard lock(mu_);
    ++stats_.created;
  }
  SetFillTarget();
  started_ = true;
  preparer_ = std::thread([this] {
    util::SetThreadName("wal-prepare");
    PreparerLoop();
  });
  return util::Status::Ok();
}

void Wal::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (preparer_.joinable()) preparer_.join();
}

util::Status Wal::Close() {
  if (!started_ || failed_ || current_.fd < 0 || !current_.in_use ||
      current_.write_pos + wal::kGroupAlign > current_.size) {
    return util::Status::Ok();  // nothing written here, or no room: Open probes instead
  }
  const std::string end = wal::EncodeEnd(next_seq_, current_.salt);
  {
    std::lock_guard fill(fill_mu_);
    if (!WriteAll(current_.fd, end.data(), end.size(), current_.write_pos)) {
      return util::Internal(WalErrno("write", Path(current_.number)));
    }
  }
  if (options_.fsync && ::fdatasync(current_.fd) != 0) {
    return util::Internal(WalErrno("sync", Path(current_.number)));
  }
  started_ = false;
  return util::Status::Ok();
}

void Wal::SetFillTarget() {
  std::lock_guard lock(fill_mu_);
  fill_fd_ = current_.fd;
  fill_size_ = current_.size;
  writer_end_ = current_.write_pos;
  filled_.store(std::max(current_.written, current_.write_pos), std::memory_order_release);
  writer_pos_.store(current_.write_pos, std::memory_order_relaxed);
  fill_asked_at_ = 0;
}

util::Status Wal::SwitchSegment(size_t need) {
  std::optional<Segment> next;
  uint64_t number = 0;
  size_t size = 0;
  {
    std::lock_guard fill(fill_mu_);  // the filler is not writing into the old segment now
    current_.written = std::max(filled_.load(std::memory_order_relaxed), current_.write_pos);
    fill_fd_ = -1;
  }
  {
    std::lock_guard lock(mu_);
    ++stats_.switches;
    preparer_idle_ = false;  // it has work now
    if (current_.fd >= 0) {
      if (current_.last_seq > applied_seq_) {
        full_.push_back(current_);
      } else {
        obsolete_.push_back(current_);
      }
    }
    current_ = Segment{};
    for (auto it = spares_.begin(); it != spares_.end(); ++it) {
      if (it->size >= wal::kSegmentHeaderBytes + need) {
        next = *it;
        spares_.erase(it);
        break;
      }
    }
    if (!next) {
      ++stats_.unprepared;
      number = next_number_++;
      size = std::max(options_.segment_bytes, wal::kSegmentHeaderBytes + need);
    }
    wake_ = true;
  }
  cv_.notify_all();
  if (!next) {
    // Nothing prepared in time (or a group larger than a segment): make one now.
    CONVERGE_ASSIGN_OR_RETURN(Segment made, Create(number, size));
    next = made;
    std::lock_guard lock(mu_);
    ++stats_.created;
  }
  current_ = *next;
  SetFillTarget();
  return util::Status::Ok();
}

util::Status Wal::Append(wal::GroupEncoder* group) {
  int fd = -1;
  CONVERGE_RETURN_IF_ERROR(Write(group, &fd));
  return Sync(fd);
}

util::Status Wal::Write(wal::GroupEncoder* group, int* sync_fd) {
  if (!started_) return util::FailedPrecondition("store: the log is not started");
  if (failed_) return util::FailedPrecondition("store: an earlier write to the log failed");
  util::Status st = WriteLocked(group, sync_fd);
  if (!st.ok()) failed_ = true;
  return st;
}

util::Status Wal::Sync(int fd) {
  if (!options_.fsync) return util::Status::Ok();
  const auto t0 = std::chrono::steady_clock::now();
  const bool ok = ::fdatasync(fd) == 0;
  const uint64_t ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  std::lock_guard lock(mu_);
  if (!ok) return util::Internal(std::string("store: sync of the log: ") + std::strerror(errno));
  ++stats_.syncs;
  stats_.sync_ns += ns;
  return util::Status::Ok();
}

util::Status Wal::WriteLocked(wal::GroupEncoder* group, int* sync_fd) {
  const size_t need = group->FinishedSize();
  if (current_.fd < 0 || current_.write_pos + need > current_.size) {
    // Groups written here but not yet synced become durable before the writer leaves, so that
    // a Sync of the segment written last covers every group written before it.
    if (current_.fd >= 0 && current_.unsynced) {
      CONVERGE_RETURN_IF_ERROR(Sync(current_.fd));
    }
    CONVERGE_RETURN_IF_ERROR(SwitchSegment(need));
  }
  group->Finish(next_seq_, current_.salt);
  const std::string& bytes = group->bytes();
  const size_t end = current_.write_pos + bytes.size();
  if (!current_.in_use) {
    // The first group: mark the segment in use; this group's fdatasync makes it durable.
    const std::string header =
        wal::EncodeSegmentHeader({current_.number, current_.salt, current_.size, true});
    if (!WriteAll(current_.fd, header.data(), header.size(), 0)) {
      return util::Internal(WalErrno("write", Path(current_.number)));
    }
    current_.in_use = true;
  }
  bool ok;
  if (end <= filled_.load(std::memory_order_acquire)) {
    // Below what the filler has written: it never writes there again.
    ok = WriteAll(current_.fd, bytes.data(), bytes.size(), current_.write_pos);
  } else {
    std::lock_guard fill(fill_mu_);
    ok = WriteAll(current_.fd, bytes.data(), bytes.size(), current_.write_pos);
    writer_end_ = end;
  }
  if (!ok) return util::Internal(WalErrno("write", Path(current_.number)));
  current_.write_pos = end;
  current_.last_seq = next_seq_++;
  current_.unsynced = true;
  *sync_fd = current_.fd;
  writer_pos_.store(end, std::memory_order_relaxed);
  // Wake the preparer to fill further once the writer is half-way into what is filled (once
  // per step of the filler).
  const size_t filled = filled_.load(std::memory_order_relaxed);
  const bool ask_fill = options_.fill_ahead_bytes > 0 && options_.fsync && filled < current_.size &&
                        end + options_.fill_ahead_bytes / 2 > filled && fill_asked_at_ != filled;
  if (ask_fill) fill_asked_at_ = filled;
  {
    std::lock_guard lock(mu_);
    ++stats_.groups;
    stats_.bytes += bytes.size();
    if (ask_fill) preparer_idle_ = false;
    if (ask_fill) wake_ = true;
  }
  if (ask_fill) cv_.notify_all();
  return util::Status::Ok();
}

void Wal::MarkApplied(uint64_t seq) {
  bool moved = false;
  {
    std::lock_guard lock(mu_);
    if (seq <= applied_seq_) return;
    applied_seq_ = seq;
    while (!full_.empty() && full_.front().last_seq <= seq) {
      obsolete_.push_back(full_.front());
      full_.pop_front();
      moved = true;
      preparer_idle_ = false;
      wake_ = true;
    }
  }
  if (moved) cv_.notify_all();
}

bool Wal::FillStep() {
  if (options_.fill_ahead_bytes == 0 || !options_.fsync) return false;
  int fd = -1;
  size_t n = 0;
  {
    std::lock_guard fill(fill_mu_);
    if (fill_fd_ < 0) return false;
    if (writer_end_ > filled_.load(std::memory_order_relaxed) + options_.fill_ahead_bytes / 2) {
      // The writer outruns the filler: under such a load the zeros would cost more than the
      // extent conversions they save (one per fdatasync, however large the group). Leave this
      // segment to the writer.
      fill_fd_ = -1;
      return false;
    }
    const size_t start = std::max(filled_.load(std::memory_order_relaxed), writer_end_);
    const size_t goal = std::min(
        fill_size_, writer_pos_.load(std::memory_order_relaxed) + options_.fill_ahead_bytes);
    if (start >= goal) return false;
    n = std::min(kZeroChunk, fill_size_ - start);
    // Under fill_mu_: the writer does not write past filled_ meanwhile.
    if (!WriteAll(fill_fd_, Zeros().data(), n, start)) return false;
    filled_.store(start + n, std::memory_order_release);
    fd = fill_fd_;
  }
  // Converts the blocks' extents now, off the writer's fdatasync. `fd` stays open: only this
  // thread closes segments, and the writer's are never closed.
  ::fdatasync(fd);
  std::lock_guard lock(mu_);
  stats_.filled_bytes += n;
  return true;
}

void Wal::PreparerLoop() {
  std::unique_lock lock(mu_);
  bool failed = false;  // a preparation failed (e.g. a full disk): leave it to the writer
  // When the preparer began waiting for an obsolete segment (min(): not waiting).
  auto waiting_since = std::chrono::steady_clock::time_point::min();
  // Every wait ends on wake_ (or stopping_), which the loop clears before it looks at the state
  // again: a signal given while the lock is released (FillStep, Recycle, Create) is not lost.
  auto woken = [&] { return wake_ || stopping_; };
  while (!stopping_) {
    wake_ = false;
    lock.unlock();
    const bool filled = FillStep();
    lock.lock();
    if (filled) continue;
    if (!failed && spares_.size() < options_.spare_segments) {
      auto it = std::find_if(obsolete_.begin(), obsolete_.end(), [&](const Segment& s) {
        return s.size == wal::AlignUp(options_.segment_bytes);
      });
      const auto now = std::chrono::steady_clock::now();
      if (it == obsolete_.end() && !full_.empty()) {
        // The applier will free a full segment soon (it lags the log by milliseconds): reuse
        // it rather than allocate a new file.
        if (waiting_since == std::chrono::steady_clock::time_point::min()) waiting_since = now;
        if (now - waiting_since < kWaitForObsolete) {
          cv_.wait_until(lock, waiting_since + kWaitForObsolete, woken);
          continue;
        }
      }
      waiting_since = std::chrono::steady_clock::time_point::min();
      const uint64_t number = next_number_++;
      util::Status st;
      if (it != obsolete_.end()) {
        Segment seg = *it;
        obsolete_.erase(it);
        lock.unlock();
        st = Recycle(&seg, number);
        lock.lock();
        if (st.ok()) {
          spares_.push_back(seg);
          ++stats_.recycled;
        } else {
          ::close(seg.fd);
        }
      } else {
        lock.unlock();
        util::StatusOr<Segment> seg = Create(number, options_.segment_bytes);
        lock.lock();
        if (seg.ok()) {
          spares_.push_back(*seg);
          ++stats_.created;
        } else {
          st = seg.status();
        }
      }
      failed = !st.ok();
      continue;
    }
    if (!obsolete_.empty()) {
      std::deque<Segment> drop;
      drop.swap(obsolete_);
      lock.unlock();
      for (Segment& s : drop) {
        ::unlink(Path(s.number).c_str());
        ::close(s.fd);
      }
      lock.lock();
      stats_.deleted += drop.size();
      continue;
    }
    if (!preparer_idle_) {
      preparer_idle_ = true;
      cv_.notify_all();  // WaitForPreparerForTest
    }
    cv_.wait(lock, woken);
    failed = false;
  }
  preparer_idle_ = true;
  cv_.notify_all();
}

void Wal::WaitForPreparerForTest() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return preparer_idle_ || !running_; });
}

Wal::Stats Wal::stats() const {
  std::lock_guard lock(mu_);
  Stats s = stats_;
  s.segment_files = spares_.size() + full_.size() + obsolete_.size() + (running_ ? 1 : 0);
  return s;
}

std::vector<uint64_t> Wal::SegmentNumbersForTest() const {
  std::vector<uint64_t> numbers;
  if (DIR* d = ::opendir(wal_dir_.c_str())) {
    while (dirent* e = ::readdir(d)) {
      uint64_t number = 0;
      if (ParseSegmentName(e->d_name, &number)) numbers.push_back(number);
    }
    ::closedir(d);
  }
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

}  // namespace converge::store
