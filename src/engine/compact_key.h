// CompactKey: an immutable byte string that keeps up to 30 bytes inline in
// 32 bytes (std::string keeps 15), so that a lock's encoded identity —
// namespace, principal, resource — rarely needs a heap block of its own.
// Internal to the engine.
#ifndef LEASEHOLD_ENGINE_COMPACT_KEY_H_
#define LEASEHOLD_ENGINE_COMPACT_KEY_H_

#include <cstdint>
#include <cstring>
#include <string_view>

namespace leasehold::engine {

class CompactKey {
 public:
  static constexpr std::size_t kInline = 30;

  CompactKey() = default;
  CompactKey(const CompactKey&) = delete;
  CompactKey& operator=(const CompactKey&) = delete;
  ~CompactKey() { Free(); }

  // Copies `bytes` (at most 65,535 of them).
  void Assign(std::string_view bytes) {
    Free();
    size_ = static_cast<std::uint16_t>(bytes.size());
    char* dst = buf_;
    if (size_ > kInline) {
      dst = new char[size_];
      std::memcpy(buf_, &dst, sizeof dst);
    }
    std::memcpy(dst, bytes.data(), size_);
  }

  std::string_view view() const {
    return {size_ > kInline ? HeapBytes() : buf_, size_};
  }
  operator std::string_view() const { return view(); }  // NOLINT: a view

 private:
  char* HeapBytes() const {
    char* p;
    std::memcpy(&p, buf_, sizeof p);
    return p;
  }
  void Free() {
    if (size_ > kInline) delete[] HeapBytes();
    size_ = 0;
  }

  char buf_[kInline];
  std::uint16_t size_ = 0;
};

static_assert(sizeof(CompactKey) == 32);

}  // namespace leasehold::engine

#endif  // LEASEHOLD_ENGINE_COMPACT_KEY_H_
