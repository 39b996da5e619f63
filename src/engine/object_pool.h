// ObjectPool: fixed-size allocation for the engine's many small nodes
// (grants, waiters). Objects live in chunks and are recycled through a free
// list, so a lock costs its own size and no malloc header, and the hot
// acquire/release path does not call malloc. Single-threaded.
#ifndef LEASEHOLD_ENGINE_OBJECT_POOL_H_
#define LEASEHOLD_ENGINE_OBJECT_POOL_H_

#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace leasehold::engine {

template <typename T, std::size_t kChunk = 1024>
class ObjectPool {
 public:
  ObjectPool() = default;
  ObjectPool(const ObjectPool&) = delete;
  ObjectPool& operator=(const ObjectPool&) = delete;
  // Objects still alive at destruction are not destroyed: the pool's owner
  // must Delete() every object it made (or hold only trivially destructible
  // leftovers).
  ~ObjectPool() = default;

  template <typename... Args>
  T* New(Args&&... args) {
    if (free_ == nullptr) Grow();
    Slot* slot = free_;
    free_ = slot->next;
    return ::new (static_cast<void*>(slot->storage))
        T(std::forward<Args>(args)...);
  }

  void Delete(T* object) {
    object->~T();
    Slot* slot = std::launder(reinterpret_cast<Slot*>(object));
    slot->next = free_;
    free_ = slot;
  }

 private:
  union Slot {
    Slot* next;
    alignas(T) unsigned char storage[sizeof(T)];
  };

  void Grow() {
    chunks_.push_back(std::make_unique<Slot[]>(kChunk));
    Slot* chunk = chunks_.back().get();
    for (std::size_t i = 0; i < kChunk; ++i) {
      chunk[i].next = free_;
      free_ = &chunk[i];
    }
  }

  Slot* free_ = nullptr;
  std::vector<std::unique_ptr<Slot[]>> chunks_;
};

}  // namespace leasehold::engine

#endif  // LEASEHOLD_ENGINE_OBJECT_POOL_H_
