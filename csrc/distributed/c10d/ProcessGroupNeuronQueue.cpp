// The process group's work queue: the worker thread that runs collectives in
// the order they were issued, the caller-thread run of a collective its
// caller waits for at once when nothing is queued (CallerWaits), the run of
// queued calls by a thread that waits for one (help_until), and
// coalescing (startCoalescing / endCoalescing: one Work for the calls between).
#include <c10/util/Exception.h>

#include <utility>

#include "distributed/c10d/CollectiveArgs.h"
#include "distributed/c10d/NeuronWork.h"
#include "distributed/c10d/ProcessGroupNeuron.h"

namespace torch_neuronx {

void ProcessGroupNeuron::worker_loop() {
  while (true) {
    Item item;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || (!queue_.empty() && !inline_); });
      if (queue_.empty()) return;  // stopping, and every queued collective ran
      item = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      running_ = item.work;
    }
    item.run();
    std::lock_guard<std::mutex> lock(mu_);
    item.work->retire();
    finished_.push_back(std::move(item));
    busy_ = false;
    running_ = nullptr;
    idle_cv_.notify_all();
  }
}

namespace {
// Set by a c10d call whose caller waits for it at once (opts.asyncOp false:
// dist.all_reduce(t) without async_op=True); read by the next enqueue on
// this thread.
thread_local bool t_caller_waits = false;
}  // namespace

ProcessGroupNeuron::CallerWaits::CallerWaits(bool async_op) { t_caller_waits = !async_op; }
ProcessGroupNeuron::CallerWaits::~CallerWaits() { t_caller_waits = false; }

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::enqueue(c10d::OpType type, std::vector<at::Tensor> outputs,
                                                           Task task, uint64_t bytes) {
  auto work = c10::make_intrusive<dist::NeuronWork>(getRank(), type, std::move(outputs));
  auto run = [this, work, task = std::move(task), bytes] {
    std::exception_ptr error;
    try {
      task();
      shm_bytes_.fetch_add(bytes);
    } catch (const dist::DistError& e) {
      error = dist::args::as_dist_backend_error(e);
    } catch (...) {
      error = std::current_exception();
    }
    work->complete(error);
  };
  Item item{std::move(run), work.get()};
  const bool caller_waits = std::exchange(t_caller_waits, false);
  std::vector<Item> finished;  // destroyed here, on the caller's thread
  {
    std::unique_lock<std::mutex> lock(mu_);
    finished.swap(finished_);
    // A collective its caller waits for at once runs on the caller's thread
    // when nothing is queued before it (the order stays the queue's): no
    // hand-off to the worker and back. The Work is complete when returned.
    if (caller_waits && queue_.empty() && !busy_ && !inline_ && !coalescing_) {
      ++sequence_;
      run_here(lock, item);
      return work;
    }
    queue_.emplace_back(std::move(item));
  }
  work->set_helper(
      [pg = c10::weak_intrusive_ptr<ProcessGroupNeuron>(
           c10::intrusive_ptr<ProcessGroupNeuron>::unsafe_reclaim_from_nonowning(this))](dist::NeuronWork& w) {
        if (auto alive = pg.lock()) alive->help_until(w);
      });
  work->set_releaser(
      [pg = c10::weak_intrusive_ptr<ProcessGroupNeuron>(
           c10::intrusive_ptr<ProcessGroupNeuron>::unsafe_reclaim_from_nonowning(this))](dist::NeuronWork& w) {
        if (auto alive = pg.lock()) alive->release_finished(w);
      });
  cv_.notify_one();
  ++sequence_;
  track_if_coalescing(work);
  return work;
}

void ProcessGroupNeuron::run_here(std::unique_lock<std::mutex>& lock, const Item& item) {
  inline_ = true;  // the worker holds what other threads queue meanwhile
  lock.unlock();
  item.run();
  lock.lock();
  item.work->retire();  // the caller destroys the item itself
  inline_ = false;
  idle_cv_.notify_all();
  // Wake the worker only for what was queued meanwhile: a needless wake-up
  // costs a futex call and puts a thread on a core the ranks need.
  if (!queue_.empty()) cv_.notify_one();
}

void ProcessGroupNeuron::help_until(dist::NeuronWork& work) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!work.isCompleted() && !queue_.empty() && !busy_ && !inline_) {  // else the worker (or a helper) is on it
    Item item = std::move(queue_.front());
    queue_.pop_front();
    run_here(lock, item);
    lock.unlock();  // the item is destroyed on this thread, without the lock
    item = Item{};
    lock.lock();
  }
}

void ProcessGroupNeuron::release_finished(dist::NeuronWork& work) {
  if (std::this_thread::get_id() == worker_.get_id()) return;  // endCoalescing's item waits on the worker
  std::vector<Item> finished;  // destroyed here, on the waiting thread, without the lock
  {
    std::unique_lock<std::mutex> lock(mu_);
    // The worker retires a call under this lock right after running it: a
    // short wait, bounded in case the call failed before it ran at all.
    idle_cv_.wait_for(lock, std::chrono::seconds(1), [&] { return work.retired(); });
    finished.swap(finished_);
  }
}

void ProcessGroupNeuron::track_if_coalescing(const c10::intrusive_ptr<c10d::Work>& work) {
  std::lock_guard<std::mutex> lock(mu_);
  if (coalescing_) coalesced_.push_back(work);
}

void ProcessGroupNeuron::startCoalescing() {
  std::lock_guard<std::mutex> lock(mu_);
  TORCH_CHECK(!coalescing_, "neuron process group '", group_name_, "': startCoalescing called twice without ",
              "endCoalescing");
  coalescing_ = true;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNeuron::endCoalescing() {
  std::vector<c10::intrusive_ptr<c10d::Work>> works;
  {
    std::lock_guard<std::mutex> lock(mu_);
    TORCH_CHECK(coalescing_, "neuron process group '", group_name_, "': endCoalescing without startCoalescing");
    coalescing_ = false;
    works.swap(coalesced_);
  }
  std::vector<at::Tensor> outputs;
  for (auto& w : works) {
    for (const at::Tensor& t : w->result()) outputs.push_back(t);
  }
  return enqueue(
      c10d::OpType::COALESCED, outputs,
      [works] {
        for (const auto& w : works) w->wait();
      },
      0);
}

}  // namespace torch_neuronx
