// EngineLoader: makes the engines an EngineService runs. One loaded from a
// store as a restart would load it, an empty one for a standby, and one from
// the last acknowledged state to answer reads during a store outage; and
// the namespace options set so far, given again to each new engine.
#ifndef LEASEHOLD_SERVICE_ENGINE_LOADER_H_
#define LEASEHOLD_SERVICE_ENGINE_LOADER_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "engine/engine.h"
#include "service/owned_event.h"
#include "store/store.h"

namespace leasehold {

struct MemoryStoreData;

struct ServiceOptions {
  // Answer reads during a store outage from the last acknowledged state
  // (EngineService). Costs a second copy of the stored rows in memory and a
  // slower load (docs/storage.md, "Reads during an outage").
  bool outage_reads = false;
};

// An engine and the collector its events go to (the engine points at it).
struct LoadedEngine {
  std::unique_ptr<EventCollector> events;
  std::unique_ptr<Engine> engine;
};

// A store to write through, and its copy of what it acknowledged (null
// without outage reads).
struct WrittenStore {
  std::unique_ptr<Store> store;
  std::shared_ptr<MemoryStoreData> last_durable;
};

class EngineLoader {
 public:
  // `clock` must outlive the loader.
  EngineLoader(EngineOptions options, ServiceOptions service_options,
               const Clock& clock)
      : options_(options), service_options_(service_options), clock_(clock) {}

  const Clock& clock() const { return clock_; }

  // `store` itself, or with outage reads a MirroredStore over it.
  WrittenStore Wrap(std::unique_ptr<Store> store) const;
  // An engine holding everything `store` holds, its sessions with a fresh
  // ttl plus `session_grace` (restoring announces nothing). Thread-safe.
  Result<LoadedEngine> Load(Store& store,
                            Duration session_grace = Duration::zero()) const;
  // An engine holding nothing: a standby's. Thread-safe.
  LoadedEngine Empty() const;
  // An engine loaded from the copy of what a store acknowledged, whose
  // changes are events to nobody: for reads during an outage. Thread-safe.
  Result<std::unique_ptr<Engine>> LoadForReads(
      std::shared_ptr<MemoryStoreData> last_durable) const;

  // Remembers a namespace's options for every engine made from now on.
  // Under the service's mutex, as ApplyNamespaces.
  void SetNamespaceOptions(std::string ns, NamespaceOptions options);
  // Gives `engine` the options remembered so far.
  void ApplyNamespaces(Engine& engine) const;

 private:
  const EngineOptions options_;  // without the sink: each engine has its own
  const ServiceOptions service_options_;
  const Clock& clock_;
  std::vector<std::pair<std::string, NamespaceOptions>> namespaces_;
};

}  // namespace leasehold

#endif  // LEASEHOLD_SERVICE_ENGINE_LOADER_H_
