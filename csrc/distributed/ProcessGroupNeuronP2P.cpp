// The neuron process group's send / recv: posted to the point-to-point
// progress thread (ShmPointToPoint), so they complete in any interleaving of
// isend / irecv across ranks and never wait behind queued collectives.
#include <c10/util/Exception.h>

#include "distributed/CollectiveArgs.h"
#include "distributed/MultiHostCollectives.h"
#include "distributed/NeuronWork.h"
#include "distributed/ProcessGroupNeuron.h"

namespace torch_neuronx {
namespace {

using namespace dist::args;

dist::ShmPointToPoint::Done completer(const c10::intrusive_ptr<dist::NeuronWork>& work) {
  return [work](std::exception_ptr error) {
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
  at::Tensor t = single(tensors, "send");
  check_peer(dst_rank, getRank(), getSize(), "send");
  wait_for_producers(tensors);
  if (multi_) return between_hosts(c10d::OpType::SEND, tensors, dst_rank, tag);
  auto work = c10::make_intrusive<dist::NeuronWork>(getRank(), c10d::OpType::SEND, tensors);
  try {
    p2p_->post_send(dst_rank, t.data_ptr(), t.nbytes(), static_cast<int32_t>(t.scalar_type()), tag, completer(work));
  } catch (const dist::DistError& e) {
    TORCH_CHECK_WITH(DistBackendError, false, e.what());
  }
  shm_bytes_.fetch_add(t.nbytes());
  track_if_coalescing(work);
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::recv(std::vector<at::Tensor>& tensors, int src_rank, int tag) {
  at::Tensor t = single(tensors, "recv");
  check_peer(src_rank, getRank(), getSize(), "recv");
  wait_for_producers(tensors);  // earlier readers of the buffer are done
  if (multi_) return between_hosts(c10d::OpType::RECV, tensors, src_rank, tag);
  auto work = c10::make_intrusive<dist::NeuronWork>(getRank(), c10d::OpType::RECV, tensors);
  try {
    p2p_->post_recv(src_rank, t.data_ptr(), t.nbytes(), static_cast<int32_t>(t.scalar_type()), tag, completer(work));
  } catch (const dist::DistError& e) {
    TORCH_CHECK_WITH(DistBackendError, false, e.what());
  }
  shm_bytes_.fetch_add(t.nbytes());
  track_if_coalescing(work);
  return work;
}

// Posted to Gloo at once (so any interleaving of isend / irecv completes);
// the returned Work waits for it on the worker, after earlier collectives.
c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::between_hosts(c10d::OpType type, std::vector<at::Tensor>& tensors,
                                                                 int peer, int tag) {
  const at::Tensor& t = tensors[0];
  at::Tensor view = dist::host_view(t.data_ptr(), t.numel(), t.scalar_type());
  c10::intrusive_ptr<c10d::Work> posted =
      type == c10d::OpType::SEND ? multi_->send(view, peer, tag) : multi_->recv(view, peer, tag);
  const char* what = type == c10d::OpType::SEND ? "send" : "recv";
  return enqueue(type, tensors, [posted, view, what, this] {
    try {
      posted->wait();
    } catch (const std::exception& e) {
      throw dist::DistError("neuron process group '" + group_name_ + "', " + what + " between hosts (gloo): " +
                            e.what());
    }
  }, 0);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::recvAnysource(std::vector<at::Tensor>&, int) {
  TORCH_CHECK(false, "recv: the neuron backend needs the source rank (pass src= to dist.recv / dist.irecv); ",
              "receiving from any source is not supported");
}

}  // namespace torch_neuronx
