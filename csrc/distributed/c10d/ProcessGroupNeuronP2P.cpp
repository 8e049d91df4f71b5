// The neuron process group's send / recv: posted to the point-to-point
// progress thread (ShmPointToPoint), so they complete in any interleaving of
// isend / irecv across ranks and never wait behind queued collectives.
#include <c10/util/Exception.h>

#include <memory>

#include "distributed/c10d/CollectiveArgs.h"
#include "distributed/c10d/NeuronWork.h"
#include "distributed/c10d/ProcessGroupNeuron.h"
#include "distributed/multihost/MultiHostCollectives.h"
#include "runtime/NeuronHostAccess.h"

namespace torch_neuronx {
namespace {

using namespace dist::args;

// Completes the Work once the transfer did; a received tensor's host bytes go
// back to it first (a staged copy; nothing to do on a host-addressable device).
dist::ShmPointToPoint::Done completer(const c10::intrusive_ptr<dist::NeuronWork>& work,
                                      std::shared_ptr<HostAccess> bytes) {
  return [work, bytes](std::exception_ptr error) {
    if (!error) {
      try {
        bytes->finish();
      } catch (...) {
        error = std::current_exception();
      }
    }
    if (error) {
      try {
        std::rethrow_exception(error);
      } catch (const dist::DistError& e) {
        error = as_dist_backend_error(e);
      } catch (...) {
      }
    }
    work->complete(error);
  };
}

void check_peer(int peer, int me, int world, const char* what) {
  TORCH_CHECK(peer >= 0 && peer < world, what, ": peer rank ", peer, " is outside the group of ", world);
  TORCH_CHECK(peer != me, what, ": rank ", me, " cannot ", what, " to or from itself");
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::send(std::vector<at::Tensor>& tensors, int dst_rank, int tag) {
  return point_to_point(c10d::OpType::SEND, tensors, dst_rank, tag);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::recv(std::vector<at::Tensor>& tensors, int src_rank, int tag) {
  return point_to_point(c10d::OpType::RECV, tensors, src_rank, tag);
}

// On one host the transfer is posted to the progress thread; between hosts it
// is posted to Gloo at once (so any interleaving of isend / irecv completes)
// and the returned Work waits for it on the worker, after earlier collectives.
c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::point_to_point(c10d::OpType type, std::vector<at::Tensor>& tensors,
                                                                  int peer, int tag) {
  const bool sending = type == c10d::OpType::SEND;
  const char* what = sending ? "send" : "recv";
  at::Tensor t = single(tensors, what);
  check_peer(peer, getRank(), getSize(), what);
  wait_for_producers(tensors);  // a send's data is written; a recv's earlier readers are done
  // The host bytes the transfer reads or writes, alive until it completed.
  auto bytes = std::make_shared<HostAccess>(t, sending ? HostAccess::Mode::kRead : HostAccess::Mode::kWrite,
                                            HostAccess::Producers::kAlreadyWaited);
  if (multi_) {
    at::Tensor view = dist::wrap_host_bytes(bytes->data(), t.numel(), t.scalar_type());
    c10::intrusive_ptr<c10d::Work> posted = sending ? multi_->send(view, peer, tag) : multi_->recv(view, peer, tag);
    return enqueue(
        type, tensors,
        [this, posted, bytes, what] {
          multi_->wait_for(posted, what, 0);
          bytes->finish();
        },
        0);
  }
  auto work = c10::make_intrusive<dist::NeuronWork>(getRank(), type, tensors);
  const auto dtype = static_cast<int32_t>(t.scalar_type());
  try {
    if (sending)
      p2p_->post_send(peer, bytes->data(), t.nbytes(), dtype, tag, completer(work, bytes));
    else
      p2p_->post_recv(peer, bytes->data(), t.nbytes(), dtype, tag, completer(work, bytes));
  } catch (const dist::DistError& e) {
    TORCH_CHECK_WITH(DistBackendError, false, e.what());
  }
  shm_bytes_.fetch_add(t.nbytes());
  track_if_coalescing(work);
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::recvAnysource(std::vector<at::Tensor>&, int) {
  TORCH_CHECK(false, "recv: the neuron backend needs the source rank (pass src= to dist.recv / dist.irecv); ",
              "receiving from any source is not supported");
}

}  // namespace torch_neuronx
