// fault_shim: an LD_PRELOAD library that makes the disk fail on command, for
// the I/O fault tests (tests/faults/io_faults_test.cc). Test use only.
//
// It intercepts fsync, fdatasync, write, writev, pwrite, pwrite64, pwritev
// and pwritev64 (SQLite's unix VFS uses pwrite64 and fdatasync). A call on a
// file descriptor whose path (read from /proc/self/fd) starts with
// $LEASEHOLD_FAULT_PREFIX is checked against the rule in the file
// $LEASEHOLD_FAULT_CONTROL; any other call goes straight to libc. A failed call
// returns -1 with the rule's errno and touches nothing.
//
// The rule is one line of space-separated key=value words, re-read on every
// watched call, so a test changes it while the process runs (write a new
// file and rename it over the old one, so that no half-written rule is
// read). A missing or empty file, or "off", fails nothing.
//
//   ops=fdatasync,fsync   which calls: fsync fdatasync write pwrite, where
//                         write covers writev and pwrite covers pwrite64,
//                         pwritev and pwritev64
//   errno=EIO             EIO, ENOSPC, EROFS, EDQUOT, or a number; or
//                         hang: the call blocks until the rule changes,
//                         then goes on and succeeds (a stalled disk)
//   after=0               let this many matching calls succeed first
//   count=1               then fail this many; count=all fails every
//                         matching call until the rule changes
//   suffix=-wal           (optional) only paths ending with this
//   id=2                  (anything else is ignored) a change of text
//
// Any change to the file's text is a new rule whose counters start at zero:
// to arm the same rule again, change a word such as id=. A rule that cannot
// be read is reported in the log and fails nothing.
//
// Each failed call appends a line to $LEASEHOLD_FAULT_CONTROL.log:
// "<call> <path> <errno name>", so that a test sees the fault happen. Each
// open (open, open64) of a watched file appends "open <path>", failing
// nothing, so that a test sees a file opened again.
//
// Under AddressSanitizer (GCC's shared runtime), a library preloaded ahead
// of it needs ASAN_OPTIONS=verify_asan_link_order=0; the calls then go from
// here to the sanitizer's interceptors (dlsym RTLD_NEXT) and on to libc.
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

enum Op : unsigned {
  kFsync = 1,
  kFdatasync = 2,
  kWrite = 4,
  kPwrite = 8,
};

constexpr std::size_t kMaxRule = 512;
constexpr std::size_t kMaxPath = 4096;

struct Rule {
  bool armed = false;
  unsigned ops = 0;
  int error = EIO;
  bool hang = false;  // errno=hang
  long after = 0;
  long count = 1;  // < 0: every matching call
  char suffix[256] = {};
};

// The rule in force and its counters; guarded by mu.
pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
char rule_text[kMaxRule + 1] = {};
Rule rule;
long matched = 0;  // matching calls under this rule
long failed = 0;   // of which failed

template <typename F>
F Real(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

using ReadFn = ssize_t (*)(int, void*, size_t);
using WriteFn = ssize_t (*)(int, const void*, size_t);
using OpenFn = int (*)(const char*, int, ...);

// libc's read and write, not ours (write is intercepted below).
ssize_t RealRead(int fd, void* buf, size_t n) {
  static const ReadFn f = Real<ReadFn>("read");
  return f(fd, buf, n);
}
ssize_t RealWrite(int fd, const void* buf, size_t n) {
  static const WriteFn f = Real<WriteFn>("write");
  return f(fd, buf, n);
}

// libc's open, not ours (intercepted below).
int RealOpen(const char* path, int flags, mode_t mode = 0) {
  static const OpenFn f = Real<OpenFn>("open");
  return f(path, flags, mode);
}

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' ? v : nullptr;
}

// Whether fd's path is watched; copies the path to `path`.
bool Watched(int fd, char (&path)[kMaxPath]) {
  const char* prefix = Env("LEASEHOLD_FAULT_PREFIX");
  if (prefix == nullptr || Env("LEASEHOLD_FAULT_CONTROL") == nullptr) {
    return false;
  }
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return false;
  path[n] = '\0';
  return std::strncmp(path, prefix, std::strlen(prefix)) == 0;
}

void Log(const char* line) {
  const char* control = Env("LEASEHOLD_FAULT_CONTROL");
  char log[kMaxPath];
  std::snprintf(log, sizeof log, "%s.log", control);
  const int fd = RealOpen(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  (void)RealWrite(fd, line, std::strlen(line));
  close(fd);
}

// The control file's text ("" if missing).
void ReadControl(char (&text)[kMaxRule + 1]) {
  text[0] = '\0';
  const int fd = RealOpen(Env("LEASEHOLD_FAULT_CONTROL"), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  std::size_t got = 0;
  ssize_t n = 0;
  while (got < kMaxRule && (n = RealRead(fd, text + got, kMaxRule - got)) > 0) {
    got += static_cast<std::size_t>(n);
  }
  text[got] = '\0';
  close(fd);
}

bool ParseOps(const char* list, unsigned& ops) {
  ops = 0;
  char copy[kMaxRule];
  std::snprintf(copy, sizeof copy, "%s", list);
  char* save = nullptr;
  for (char* op = strtok_r(copy, ",", &save); op != nullptr;
       op = strtok_r(nullptr, ",", &save)) {
    if (std::strcmp(op, "fsync") == 0) {
      ops |= kFsync;
    } else if (std::strcmp(op, "fdatasync") == 0) {
      ops |= kFdatasync;
    } else if (std::strcmp(op, "write") == 0) {
      ops |= kWrite;
    } else if (std::strcmp(op, "pwrite") == 0) {
      ops |= kPwrite;
    } else {
      return false;
    }
  }
  return ops != 0;
}

bool ParseErrno(const char* v, int& error) {
  static const struct {
    const char* name;
    int value;
  } kNames[] = {
      {"EIO", EIO}, {"ENOSPC", ENOSPC}, {"EROFS", EROFS}, {"EDQUOT", EDQUOT}};
  for (const auto& n : kNames) {
    if (std::strcmp(v, n.name) == 0) {
      error = n.value;
      return true;
    }
  }
  char* end = nullptr;
  error = static_cast<int>(std::strtol(v, &end, 10));
  return *v != '\0' && *end == '\0' && error > 0;
}

bool ParseCount(const char* v, long& n) {
  if (std::strcmp(v, "all") == 0) {
    n = -1;
    return true;
  }
  char* end = nullptr;
  n = std::strtol(v, &end, 10);
  return *v != '\0' && *end == '\0' && n >= 0;
}

bool ParseWord(char* word, Rule& r) {
  char* eq = std::strchr(word, '=');
  if (eq == nullptr) return std::strcmp(word, "off") == 0;
  *eq = '\0';
  const char* v = eq + 1;
  if (std::strcmp(word, "ops") == 0) return ParseOps(v, r.ops);
  if (std::strcmp(word, "errno") == 0) {
    r.hang = std::strcmp(v, "hang") == 0;
    return r.hang || ParseErrno(v, r.error);
  }
  if (std::strcmp(word, "after") == 0) return ParseCount(v, r.after);
  if (std::strcmp(word, "count") == 0) return ParseCount(v, r.count);
  if (std::strcmp(word, "suffix") == 0) {
    std::snprintf(r.suffix, sizeof r.suffix, "%s", v);
  }
  return true;  // id= and other words: only their text matters
}

// The rule `text` says; disarmed if it says "off", nothing, or nonsense.
Rule Parse(const char* text) {
  Rule r;
  char copy[kMaxRule + 1];
  std::snprintf(copy, sizeof copy, "%s", text);
  char* save = nullptr;
  bool any = false;
  for (char* w = strtok_r(copy, " \t\r\n", &save); w != nullptr;
       w = strtok_r(nullptr, " \t\r\n", &save)) {
    if (std::strcmp(w, "off") == 0) return Rule{};
    if (!ParseWord(w, r)) {
      char line[kMaxRule + 64];
      std::snprintf(line, sizeof line, "bad rule, nothing fails: %s\n", text);
      Log(line);
      return Rule{};
    }
    any = true;
  }
  r.armed = any && r.ops != 0;
  if (any && r.ops == 0) Log("bad rule (no ops=), nothing fails\n");
  return r;
}

bool EndsWith(const char* s, const char* suffix) {
  const std::size_t a = std::strlen(s), b = std::strlen(suffix);
  return a >= b && std::strcmp(s + a - b, suffix) == 0;
}

const char* ErrnoName(int e) {
  switch (e) {
    case EIO:
      return "EIO";
    case ENOSPC:
      return "ENOSPC";
    case EROFS:
      return "EROFS";
    case EDQUOT:
      return "EDQUOT";
    default:
      return "errno";
  }
}

// 0 if the call may proceed, else the errno it fails with.
int Decide(int fd, Op op, const char* call) {
  char path[kMaxPath];
  if (!Watched(fd, path)) return 0;
  char text[kMaxRule + 1];
  ReadControl(text);
  pthread_mutex_lock(&mu);
  if (std::strcmp(text, rule_text) != 0) {
    std::memcpy(rule_text, text, sizeof text);
    rule = Parse(text);
    matched = failed = 0;
  }
  int error = 0;
  bool hang = false;
  if (rule.armed && (rule.ops & op) != 0 &&
      (rule.suffix[0] == '\0' || EndsWith(path, rule.suffix))) {
    ++matched;
    if (matched > rule.after && (rule.count < 0 || failed < rule.count)) {
      ++failed;
      hang = rule.hang;
      error = rule.hang ? 0 : rule.error;
    }
  }
  pthread_mutex_unlock(&mu);
  if (hang) {
    char line[kMaxPath + 64];
    std::snprintf(line, sizeof line, "%s %s hang\n", call, path);
    Log(line);
    char now[kMaxRule + 1];
    do {
      usleep(10'000);
      ReadControl(now);
    } while (std::strcmp(now, text) == 0);
  }
  if (error != 0) {
    char line[kMaxPath + 64];
    std::snprintf(line, sizeof line, "%s %s %s\n", call, path,
                  ErrnoName(error));
    Log(line);
  }
  return error;
}

// Decide(), leaving errno as it was: a call that proceeds sets its own.
int Fault(int fd, Op op, const char* call) {
  const int saved = errno;
  const int error = Decide(fd, op, call);
  errno = saved;
  return error;
}

// Logs "open <path>" when `path`, just opened, is watched.
void NoteOpen(const char* path) {
  const char* prefix = Env("LEASEHOLD_FAULT_PREFIX");
  if (prefix == nullptr || Env("LEASEHOLD_FAULT_CONTROL") == nullptr ||
      std::strncmp(path, prefix, std::strlen(prefix)) != 0) {
    return;
  }
  char line[kMaxPath + 16];
  std::snprintf(line, sizeof line, "open %s\n", path);
  Log(line);
}

// open's mode argument, present only when the flags create a file.
mode_t ModeArgument(int flags, va_list args) {
  const bool creates =
      (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
  return creates ? static_cast<mode_t>(va_arg(args, unsigned)) : 0;
}

int OpenAndNote(OpenFn real, const char* path, int flags, mode_t mode) {
  const int fd = real(path, flags, mode);
  if (fd >= 0) {
    const int saved = errno;
    NoteOpen(path);
    errno = saved;
  }
  return fd;
}

}  // namespace

// The intercepted calls: each asks Fault(), then calls the next definition
// (the sanitizer's interceptor, or libc's).
#define LEASEHOLD_FAULT_OR_CALL(op, name, type, ...)  \
  do {                                                \
    if (const int e = Fault(fd, op, #name); e != 0) { \
      errno = e;                                      \
      return -1;                                      \
    }                                                 \
    static const type real = Real<type>(#name);       \
    return real(__VA_ARGS__);                         \
  } while (false)

extern "C" {

int open(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  const mode_t mode = ModeArgument(flags, args);
  va_end(args);
  static const OpenFn real = Real<OpenFn>("open");
  return OpenAndNote(real, path, flags, mode);
}

int open64(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  const mode_t mode = ModeArgument(flags, args);
  va_end(args);
  static const OpenFn real = Real<OpenFn>("open64");
  return OpenAndNote(real, path, flags, mode);
}

int fsync(int fd) {
  using Fn = int (*)(int);
  LEASEHOLD_FAULT_OR_CALL(kFsync, fsync, Fn, fd);
}

int fdatasync(int fd) {
  using Fn = int (*)(int);
  LEASEHOLD_FAULT_OR_CALL(kFdatasync, fdatasync, Fn, fd);
}

ssize_t write(int fd, const void* buf, size_t n) {
  LEASEHOLD_FAULT_OR_CALL(kWrite, write, WriteFn, fd, buf, n);
}

ssize_t writev(int fd, const struct iovec* iov, int n) {
  using Fn = ssize_t (*)(int, const struct iovec*, int);
  LEASEHOLD_FAULT_OR_CALL(kWrite, writev, Fn, fd, iov, n);
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t at) {
  using Fn = ssize_t (*)(int, const void*, size_t, off_t);
  LEASEHOLD_FAULT_OR_CALL(kPwrite, pwrite, Fn, fd, buf, n, at);
}

ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t at) {
  using Fn = ssize_t (*)(int, const void*, size_t, off64_t);
  LEASEHOLD_FAULT_OR_CALL(kPwrite, pwrite64, Fn, fd, buf, n, at);
}

ssize_t pwritev(int fd, const struct iovec* iov, int n, off_t at) {
  using Fn = ssize_t (*)(int, const struct iovec*, int, off_t);
  LEASEHOLD_FAULT_OR_CALL(kPwrite, pwritev, Fn, fd, iov, n, at);
}

ssize_t pwritev64(int fd, const struct iovec* iov, int n, off64_t at) {
  using Fn = ssize_t (*)(int, const struct iovec*, int, off64_t);
  LEASEHOLD_FAULT_OR_CALL(kPwrite, pwritev64, Fn, fd, iov, n, at);
}

}  // extern "C"
