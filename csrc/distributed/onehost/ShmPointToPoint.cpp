#include "distributed/onehost/ShmPointToPoint.h"

#include <c10/core/ScalarType.h>

#include <algorithm>
#include <cstring>

namespace torch_neuronx::dist {
namespace {

constexpr uint64_t kRecordMagic = 0x4e45555250325031ull;  // "NEURP2P1"
constexpr size_t kRecordBytes = 64;
constexpr auto kDeathCheckEvery = std::chrono::milliseconds(50);

struct alignas(64) Record {
  uint64_t magic;
  uint64_t bytes;
  int64_t tag;
  int32_t dtype;
};
static_assert(sizeof(Record) == kRecordBytes);

size_t padded(size_t n) { return (n + kRecordBytes - 1) / kRecordBytes * kRecordBytes; }

std::string dtype_name(int32_t dtype) {
  return dtype < 0 ? "bytes" : c10::toString(static_cast<c10::ScalarType>(dtype));
}

std::exception_ptr error(const std::string& what) { return std::make_exception_ptr(DistError(what)); }

// Copies stream bytes [off, off + n) of a message of `bytes` real bytes into
// the ring at absolute position `pos`; the padding past `bytes` is not written.
void copy_in(char* ring, size_t ring_bytes, uint64_t pos, const char* src, size_t bytes, size_t off, size_t n) {
  while (n > 0) {
    const size_t at = pos % ring_bytes, len = std::min(n, ring_bytes - at);
    if (off < bytes) std::memcpy(ring + at, src + off, std::min(len, bytes - off));
    pos += len, off += len, n -= len;
  }
}

// The reverse of copy_in; dst null drains.
void copy_out(const char* ring, size_t ring_bytes, uint64_t pos, char* dst, size_t bytes, size_t off, size_t n) {
  while (n > 0) {
    const size_t at = pos % ring_bytes, len = std::min(n, ring_bytes - at);
    if (dst && off < bytes) std::memcpy(dst + off, ring + at, std::min(len, bytes - off));
    pos += len, off += len, n -= len;
  }
}

}  // namespace

struct ShmPointToPoint::Op {
  bool send;
  int peer;
  char* data;
  size_t bytes;
  int32_t dtype;
  int64_t tag;
  Done done;
  std::chrono::steady_clock::time_point deadline;  // moves on with every byte moved
  bool framed = false;                             // record written (send) or read (recv)
  bool drain = false;                              // recv: the record did not match; discard the payload
  size_t stream = 0;                               // padded payload bytes of the message
  size_t moved = 0;                                // of them, moved so far
  std::exception_ptr error;
  bool complete() const { return framed && moved == stream; }
};

struct ShmPointToPoint::Peer {
  std::deque<std::unique_ptr<Op>> sends, recvs;
  std::string broken_send, broken_recv;  // set when a message failed mid-transfer
};

ShmPointToPoint::ShmPointToPoint(ShmGroup& group, std::string group_name, std::chrono::milliseconds timeout)
    : group_(group), group_name_(std::move(group_name)), timeout_(timeout), peers_(group.world()) {
  thread_ = std::thread([this] { progress_loop(); });
}

ShmPointToPoint::~ShmPointToPoint() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  group_.notify_rings();
  thread_.join();
  for (Peer& peer : peers_) {
    for (auto* fifo : {&peer.sends, &peer.recvs}) {
      for (auto& op : *fifo) {
        op->done(error(describe(*op) + ": the process group was destroyed before it completed"));
      }
    }
  }
}

std::string ShmPointToPoint::describe(const Op& op) const {
  return "neuron process group '" + group_name_ + "', " + (op.send ? "send" : "recv") + " of " +
         std::to_string(op.bytes) + " bytes (" + dtype_name(op.dtype) + ", tag " + std::to_string(op.tag) + ") " +
         (op.send ? "to" : "from") + " rank " + std::to_string(op.peer);
}

void ShmPointToPoint::post_send(int dst, const void* data, size_t bytes, int32_t dtype, int64_t tag, Done done) {
  post(std::unique_ptr<Op>(
      new Op{true, dst, static_cast<char*>(const_cast<void*>(data)), bytes, dtype, tag, std::move(done), {}}));
}

void ShmPointToPoint::post_recv(int src, void* data, size_t bytes, int32_t dtype, int64_t tag, Done done) {
  post(std::unique_ptr<Op>(new Op{false, src, static_cast<char*>(data), bytes, dtype, tag, std::move(done), {}}));
}

void ShmPointToPoint::post(std::unique_ptr<Op> op) {
  if (op->peer < 0 || op->peer >= group_.world() || op->peer == group_.rank()) {
    throw DistError(describe(*op) + ": the peer must be another rank of the group (0.." +
                    std::to_string(group_.world() - 1) + ", not " + std::to_string(group_.rank()) + ")");
  }
  op->deadline = std::chrono::steady_clock::now() + timeout_;
  std::vector<Done> finished;  // destroyed here, on the caller's thread
  std::exception_ptr broken;
  {
    std::lock_guard<std::mutex> lock(mu_);
    finished.swap(finished_);
    Peer& peer = peers_[op->peer];
    const std::string& why = op->send ? peer.broken_send : peer.broken_recv;
    if (!why.empty())
      broken = error(describe(*op) + ": " + why);
    else
      (op->send ? peer.sends : peer.recvs).push_back(std::move(op));
  }
  if (broken) std::rethrow_exception(broken);
  group_.notify_rings();
}

bool ShmPointToPoint::progress_send(Op& op) {
  ShmChannel& ch = group_.channel(group_.rank(), op.peer);
  char* ring = group_.ring(group_.rank(), op.peer);
  const size_t ring_bytes = group_.ring_bytes();
  uint64_t head = ch.head.load(std::memory_order_relaxed);
  size_t room = ring_bytes - (head - ch.tail.load(std::memory_order_acquire));
  bool moved = false;
  if (!op.framed) {
    if (room < kRecordBytes) return false;
    Record rec{kRecordMagic, op.bytes, op.tag, op.dtype};
    std::memcpy(ring + head % ring_bytes, &rec, kRecordBytes);  // never wraps: positions stay 64-aligned
    head += kRecordBytes, room -= kRecordBytes;
    op.framed = true, op.stream = padded(op.bytes), moved = true;
  }
  const size_t n = std::min(room, op.stream - op.moved);
  if (n > 0) {
    copy_in(ring, ring_bytes, head, op.data, op.bytes, op.moved, n);
    head += n, op.moved += n, moved = true;
  }
  if (moved) ch.head.store(head, std::memory_order_release);
  return moved;
}

bool ShmPointToPoint::progress_recv(Op& op) {
  ShmChannel& ch = group_.channel(op.peer, group_.rank());
  const char* ring = group_.ring(op.peer, group_.rank());
  const size_t ring_bytes = group_.ring_bytes();
  uint64_t tail = ch.tail.load(std::memory_order_relaxed);
  size_t ready = ch.head.load(std::memory_order_acquire) - tail;
  bool moved = false;
  if (!op.framed) {
    if (ready < kRecordBytes) return false;
    Record rec;
    std::memcpy(&rec, ring + tail % ring_bytes, kRecordBytes);
    tail += kRecordBytes, ready -= kRecordBytes;
    op.framed = true, moved = true;
    if (rec.magic != kRecordMagic) {
      op.error = error(describe(op) + ": the ring from rank " + std::to_string(op.peer) + " is corrupt");
      op.stream = 0;
    } else {
      op.stream = padded(rec.bytes);
      if (rec.bytes != op.bytes || rec.dtype != op.dtype || rec.tag != op.tag) {
        op.drain = true;
        op.error = error(describe(op) + ": rank " + std::to_string(op.peer) + " sent " + std::to_string(rec.bytes) +
                         " bytes (" + dtype_name(rec.dtype) + ", tag " + std::to_string(rec.tag) +
                         "): sends and recvs between two ranks must match in order, size, dtype and tag");
      }
    }
  }
  const size_t n = std::min(ready, op.stream - op.moved);
  if (n > 0) {
    copy_out(ring, ring_bytes, tail, op.drain ? nullptr : op.data, op.bytes, op.moved, n);
    tail += n, op.moved += n, moved = true;
  }
  if (moved) ch.tail.store(tail, std::memory_order_release);
  return moved;
}

void ShmPointToPoint::finish(Peer& peer, bool send, std::exception_ptr err) {
  std::unique_ptr<Op> op;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& fifo = send ? peer.sends : peer.recvs;
    op = std::move(fifo.front());
    fifo.pop_front();
    finishing_ = true;
  }
  op->done(err);  // outside the lock: it may run future callbacks
  {
    std::lock_guard<std::mutex> lock(mu_);
    finished_.push_back(std::move(op->done));
    finishing_ = false;
  }
  finished_cv_.notify_all();
}

void ShmPointToPoint::take_finished(std::vector<Done>& out) {
  std::unique_lock<std::mutex> lock(mu_);
  finished_cv_.wait_for(lock, std::chrono::seconds(1), [&] { return !finishing_; });
  for (Done& d : finished_) out.push_back(std::move(d));
  finished_.clear();
}

ShmPointToPoint::Op* ShmPointToPoint::front(Peer& peer, bool send) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& fifo = send ? peer.sends : peer.recvs;
  return fifo.empty() ? nullptr : fifo.front().get();
}

void ShmPointToPoint::fail_stalled(std::chrono::steady_clock::time_point now) {
  for (int r = 0; r < group_.world(); ++r) {
    Peer& peer = peers_[r];
    for (bool send : {true, false}) {
      Op* head = front(peer, send);
      if (!head) continue;
      std::string why;
      if (group_.rank_exited(r)) {
        why = "rank " + std::to_string(r) + " of the group exited (its process is gone)";
      } else if (now >= head->deadline) {
        why = "timed out after " + std::to_string(timeout_.count()) + " ms without progress (rank " +
              std::to_string(r) + (send ? " posted no matching recv" : " sent nothing") + ")";
      } else {
        continue;
      }
      const bool mid_transfer = head->framed;
      if (mid_transfer || group_.rank_exited(r)) {
        std::lock_guard<std::mutex> lock(mu_);
        (send ? peer.broken_send : peer.broken_recv) = "an earlier message failed: " + why;
      }
      finish(peer, send, error(describe(*head) + ": " + why));
      // Ops queued behind a message that broke off mid-transfer cannot match.
      while (Op* next = mid_transfer ? front(peer, send) : nullptr) {
        finish(peer, send, error(describe(*next) + ": an earlier message failed: " + why));
      }
    }
  }
}

void ShmPointToPoint::progress_loop() {
  auto last_check = std::chrono::steady_clock::now();
  int idle = 0;
  while (true) {
    const uint32_t seen = group_.ring_wake_value();
    std::vector<Op*> heads;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
      for (Peer& peer : peers_) {
        if (!peer.sends.empty()) heads.push_back(peer.sends.front().get());
        if (!peer.recvs.empty()) heads.push_back(peer.recvs.front().get());
      }
    }
    bool moved = false;
    const auto now = std::chrono::steady_clock::now();
    for (Op* op : heads) {
      if (op->send ? progress_send(*op) : progress_recv(*op)) {
        moved = true;
        op->deadline = now + timeout_;
      }
      if (op->complete()) finish(peers_[op->peer], op->send, op->error);
    }
    if (moved) {
      group_.notify_rings();
      idle = 0;
      continue;
    }
    if (!heads.empty() && now - last_check >= kDeathCheckEvery) {
      fail_stalled(now);
      last_check = now;
    }
    if (!heads.empty() && ++idle < 64) {
      std::this_thread::yield();
      continue;
    }
    group_.wait_for_ring_change(seen, kDeathCheckEvery);
  }
}

}  // namespace torch_neuronx::dist
