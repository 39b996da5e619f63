#include "service/engine_loader.h"

#include "service/restore.h"
#include "store/memory/memory_store.h"
#include "store/mirrored_store.h"

namespace leasehold {

WrittenStore EngineLoader::Wrap(std::unique_ptr<Store> store) const {
  if (!service_options_.outage_reads) return {std::move(store), nullptr};
  auto mirrored = std::make_unique<MirroredStore>(std::move(store));
  auto last_durable = mirrored->mirror();
  return {std::move(mirrored), std::move(last_durable)};
}

Result<LoadedEngine> EngineLoader::Load(Store& store,
                                        Duration session_grace) const {
  LoadedEngine loaded{std::make_unique<EventCollector>(), nullptr};
  EngineOptions options = options_;
  options.events = loaded.events.get();
  auto engine = RestoreEngine(store, options, clock_, session_grace);
  if (!engine) return std::unexpected(engine.error());
  (void)loaded.events->Take();
  loaded.engine = std::move(*engine);
  return loaded;
}

LoadedEngine EngineLoader::Empty() const {
  LoadedEngine empty{std::make_unique<EventCollector>(), nullptr};
  EngineOptions options = options_;
  options.events = empty.events.get();
  empty.engine = std::make_unique<Engine>(options);
  return empty;
}

Result<std::unique_ptr<Engine>> EngineLoader::LoadForReads(
    std::shared_ptr<MemoryStoreData> last_durable) const {
  // The copy holds no more than what was acknowledged: the committer
  // appends nothing after a failure.
  auto copy = OpenMemoryStore(std::move(last_durable));
  EngineOptions options = options_;
  options.events = nullptr;  // nothing it does is an event
  return RestoreEngine(*copy, options, clock_);
}

void EngineLoader::SetNamespaceOptions(std::string ns,
                                       NamespaceOptions options) {
  std::erase_if(namespaces_,
                [&](const auto& kept) { return kept.first == ns; });
  namespaces_.emplace_back(std::move(ns), options);
}

void EngineLoader::ApplyNamespaces(Engine& engine) const {
  for (const auto& [ns, options] : namespaces_) {
    engine.SetNamespaceOptions(ns, options);
  }
}

}  // namespace leasehold
