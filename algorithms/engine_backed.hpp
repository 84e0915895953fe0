#pragma once

#include <memory>
#include <utility>

#include "algorithms/algorithm.hpp"
#include "algorithms/comm/engine.hpp"

namespace commsgd::algorithms {

// The communication engine of an algorithm that communicates on a thread of its own (dense with
// buckets, osgp, adpsgd), and the algorithm's ending. The engine's operations touch the
// algorithm's members, some of which live on the engine's stream, so the thread must stop before
// any member is destroyed and the engine must outlive them all. Both hold whatever order the
// algorithm declares its members in:
// - the engine lives in this base, which the algorithm lists first among its bases, so it is
//   made before and destroyed after everything else of the algorithm;
// - an engine-backed algorithm A is made as EngineStoppedFirst<A> (make_engine_backed), whose
//   destructor runs before A's members are destroyed and stops the engine. A's own destructor
//   is protected, so that A cannot be made any other way.
class EngineBacked {
 protected:
  EngineBacked() = default;
  ~EngineBacked() = default;
  EngineBacked(const EngineBacked&) = delete;
  EngineBacked& operator=(const EngineBacked&) = delete;

  // Makes the engine; an algorithm calls it once, from its constructor (dense only when it has
  // buckets).
  void make_engine(comm::Communicator& comm) { engine_ = std::make_unique<comm::Engine>(comm); }
  bool has_engine() const { return engine_ != nullptr; }
  comm::Engine& engine() const { return *engine_; }

  // `stats` with the engine's totals added, the one merge of the two: the engine's bytes are the
  // algorithm's like any other, its seconds overlapped communication (off the training thread).
  AlgorithmStats with_engine_totals(AlgorithmStats stats) const {
    if (!engine_) return stats;
    const comm::Engine::Totals totals = engine_->totals();
    stats.overlapped_seconds += totals.seconds;
    stats.bytes_sent += totals.bytes_sent;
    stats.bytes_received += totals.bytes_received;
    return stats;
  }

  // Lets the operations under way finish and joins the engine's thread.
  void stop_engine() {
    if (engine_) engine_->stop();
  }

 private:
  std::unique_ptr<comm::Engine> engine_;
};

// An engine-backed algorithm as it is made: its engine stopped before the algorithm's members
// are destroyed.
template <class A>
class EngineStoppedFirst final : public A {
 public:
  using A::A;
  ~EngineStoppedFirst() override { this->stop_engine(); }
};

template <class A, class... Args>
std::unique_ptr<EngineStoppedFirst<A>> make_engine_backed(Args&&... args) {
  return std::make_unique<EngineStoppedFirst<A>>(std::forward<Args>(args)...);
}

}  // namespace commsgd::algorithms
