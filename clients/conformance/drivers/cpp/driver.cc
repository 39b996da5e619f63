// The C++ client's conformance driver: the public API of
// include/leasehold/client.h over the line protocol of
// clients/conformance/PROTOCOL.md (JSON lines on stdin and stdout).
//
//   conformance_driver_cpp
//
// Each request runs on a thread of its own, so a lock that waits does not
// hold up the next line; stdout is written whole lines under one mutex.
//
// Locks and semaphore slots are the session's guards (Session::Lock and
// Session::Permits), as an application takes them; a lock's loss is what
// the client signals for it (client.h, SemaphoreGuard): the session's
// on_lost.
//
// When stdin closes, the driver cancels the waits of its sessions, checks
// its checkouts in, ends its sessions, stops its watches and exits 0; what
// has not finished within a few seconds (a server that stopped answering)
// is abandoned with _Exit(0).
#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iostream>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "leasehold/client.h"

namespace json = boost::json;
namespace lh = leasehold::client;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

// --- output -------------------------------------------------------------

std::mutex out_mu;

void WriteLine(const json::object& line) {
  std::string text = json::serialize(line);
  text.push_back('\n');
  std::lock_guard lock(out_mu);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

void Signal(std::string_view kind, std::string_view of) {
  WriteLine({{"event", kind}, {"of", of}});
}

void Log(std::string_view what) {
  std::lock_guard lock(out_mu);  // keeps log lines whole too
  std::fprintf(stderr, "conformance_driver_cpp: %.*s\n",
               static_cast<int>(what.size()), what.data());
}

// --- errors -------------------------------------------------------------

// A request the driver cannot serve (a bad line, an unknown handle): kind
// "driver".
struct DriverError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An error of the client, as the answer's error object.
struct Failure {
  json::object error;
};

// What an Error means depends on what returned it: a session's "lost" is
// the session gone, a guard's the handle's lease or lock gone.
enum class Source { kCall, kSession, kGuard };

std::string IdText(const json::value& v) {
  if (v.is_string()) return std::string(v.get_string());
  if (v.is_null()) return "";
  return json::serialize(v);  // a number
}

// The edges of a deadlock's cycle, from the server's {"victim","cycle":[...]}
// that a guard's Error carries.
json::array CycleOf(const json::value& deadlock) {
  json::array cycle;
  const json::object* d = deadlock.if_object();
  const json::value* edges = d ? d->if_contains("cycle") : nullptr;
  if (!edges || !edges->is_array()) return cycle;
  for (const json::value& edge : edges->get_array()) {
    const json::object* o = edge.if_object();
    if (!o) continue;
    auto text = [o](std::string_view key) {
      const json::value* v = o->if_contains(key);
      return v ? IdText(*v) : std::string();
    };
    cycle.push_back(json::object{{"waiter", text("waiter")},
                                 {"holder", text("holder")},
                                 {"resource", text("resource")}});
  }
  return cycle;
}

json::object ErrorObject(const lh::Error& e, Source source) {
  std::string kind = "error";
  const std::string& c = e.code;
  // The guards' refusals are Errors whose code is the server's status (with
  // the 409 it came with); a plain call's "timeout" is its io_timeout.
  if (c == "timeout" && e.http_status == 409) {
    kind = "timeout";
  } else if (c == "cancelled" && e.http_status == 409) {
    kind = "cancelled";
  } else if (c == "deadlock") {
    kind = "deadlock";
  } else if (c == "locked") {
    kind = "locked";
  } else if (c == "lost") {
    kind = source == Source::kSession ? "session_lost" : "lost";
  } else if (c == "session_not_found") {
    kind = "session_lost";
  } else if (c == "stale_fence") {
    kind = "stale_fence";
  } else if (c == "unreachable") {
    kind = "unreachable";
  }
  json::object out{{"kind", kind},
                   {"code", e.code},
                   {"status", e.http_status},
                   {"message", e.message}};
  if (kind == "deadlock") out["cycle"] = CycleOf(e.deadlock);
  return out;
}

Failure Fail(const lh::Error& e, Source source) {
  return Failure{ErrorObject(e, source)};
}

// A save or checkin that the server refused (WriteOutcome::done false): an
// outcome of the C++ client, not an Error, so no typed kind.
Failure WriteRefused(const std::string& reason, const std::string& what) {
  const unsigned status = reason == "version_mismatch" ? 412 : 423;
  return Failure{json::object{{"kind", "error"},
                              {"code", reason},
                              {"status", status},
                              {"message", what + " refused: " + reason}}};
}

// --- request fields -----------------------------------------------------

const json::value& Field(const json::object& req, std::string_view key) {
  const json::value* v = req.if_contains(key);
  if (!v) throw DriverError("missing field \"" + std::string(key) + "\"");
  return *v;
}

std::string Str(const json::object& req, std::string_view key) {
  const json::value& v = Field(req, key);
  if (!v.is_string()) {
    throw DriverError("field \"" + std::string(key) + "\" is not a string");
  }
  return std::string(v.get_string());
}

std::int64_t Int(const json::object& req, std::string_view key) {
  const json::value& v = Field(req, key);
  json::error_code ec;
  const auto n = v.to_number<std::int64_t>(ec);
  if (ec) {
    throw DriverError("field \"" + std::string(key) + "\" is not an integer");
  }
  return n;
}

milliseconds Ms(const json::object& req, std::string_view key) {
  return milliseconds(Int(req, key));
}

json::value OptionalString(const std::optional<std::string>& s) {
  if (!s) return nullptr;
  return json::value(*s);
}

// --- handles --------------------------------------------------------------

// Each handle has a mutex: the client's Session and guards belong to one
// thread at a time (client.h), and the requests naming one run on
// different threads.
struct Handle {
  virtual ~Handle() = default;
  std::mutex mu;
};

// What a session's on_lost and on_hold_lost need: the locks and slots
// taken through it, each reported lost once (with the session, or when the
// server takes it back) unless released first.
struct SessionLoss {
  struct Held {
    std::string as;  // the handle's name
    std::string ns, name, kind;
    std::shared_ptr<std::atomic<bool>> released;
    bool signalled = false;
  };
  std::mutex mu;
  std::vector<Held> held;
  bool lost = false;

  void Add(std::string as, std::string ns, std::string name, std::string kind,
           std::shared_ptr<std::atomic<bool>> released) {
    std::lock_guard lock(mu);
    held.push_back({std::move(as), std::move(ns), std::move(name),
                    std::move(kind), std::move(released)});
  }
  // Runs on the session's keepalive thread (its on_lost).
  void Lost(const std::string& session) {
    std::vector<std::string> names;
    {
      std::lock_guard lock(mu);
      if (lost) return;
      lost = true;
      for (Held& h : held) {
        if (!h.released->load() && !h.signalled) names.push_back(h.as);
        h.signalled = true;
      }
    }
    Signal("lost", session);
    for (const std::string& name : names) Signal("lost", name);
  }
  // Runs on the keepalive thread (its on_hold_lost): the server took a name
  // back (a hold limit, a break).
  void TakenBack(const lh::LostHold& taken) {
    if (taken.owner != "Session") return;
    std::vector<std::string> names;
    {
      std::lock_guard lock(mu);
      for (Held& h : held) {
        if (h.ns != taken.ns || h.name != taken.resource ||
            h.kind != taken.kind || h.released->load() || h.signalled) {
          continue;
        }
        h.signalled = true;
        names.push_back(h.as);
      }
    }
    for (const std::string& name : names) Signal("lost", name);
  }
};

struct SessionHandle : Handle {
  std::string id;                      // const once made
  std::shared_ptr<SessionLoss> loss;   // const once made
  std::optional<lh::Session> session;  // under mu
};

// A lock or a semaphore slot.
struct LockHandle : Handle {
  std::string ns, name;
  std::shared_ptr<std::atomic<bool>> released =
      std::make_shared<std::atomic<bool>>(false);
  std::optional<lh::LockGuard> lock;       // under mu
  std::optional<lh::SemaphoreGuard> slot;  // under mu
};

struct CheckoutHandle : Handle {
  std::optional<lh::CheckoutGuard> guard;  // under mu
};

struct WatchHandle : Handle {
  std::string ns;
  std::atomic<bool> stop{false};
  std::atomic<bool> done{false};
};

// Threads: every request's and every watch's, joined once finished (on
// each new line) and at exit.
class Threads {
 public:
  Threads() = default;
  Threads(const Threads&) = delete;
  Threads& operator=(const Threads&) = delete;
  ~Threads() {
    for (Task& t : tasks_) {
      if (t.thread.joinable()) t.thread.join();
    }
  }

  void Spawn(std::function<void()> work) {
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::thread t([work = std::move(work), done] {
      work();
      done->store(true);
    });
    std::lock_guard lock(mu_);
    tasks_.push_back({std::move(t), std::move(done)});
  }
  void Reap() {
    std::list<Task> finished;
    {
      std::lock_guard lock(mu_);
      for (auto it = tasks_.begin(); it != tasks_.end();) {
        if (it->done->load()) {
          finished.splice(finished.end(), tasks_, it++);
        } else {
          ++it;
        }
      }
    }
    for (Task& t : finished) t.thread.join();
  }
  std::size_t Running() {
    std::lock_guard lock(mu_);
    std::size_t n = 0;
    for (const Task& t : tasks_) n += t.done->load() ? 0 : 1;
    return n;
  }
  // Detaches what is left: only before _Exit.
  void Abandon() {
    std::lock_guard lock(mu_);
    for (Task& t : tasks_) t.thread.detach();
    tasks_.clear();
  }

 private:
  struct Task {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::mutex mu_;
  std::list<Task> tasks_;
};

class Driver {
 public:
  // Answers one request line (on its own thread).
  void Serve(const json::value& id, const json::object& req) {
    json::object answer{{"id", id}};
    try {
      answer["ok"] = Run(req);
    } catch (const Failure& f) {
      answer["error"] = f.error;
    } catch (const std::exception& e) {
      answer["error"] = json::object{{"kind", "driver"}, {"message", e.what()}};
    }
    WriteLine(answer);
  }

  Threads& threads() { return threads_; }
  std::atomic<int>& requests() { return requests_; }

  // stdin closed: best effort, bounded by the caller's deadline.
  void CloseAll() {
    closing_ = true;
    std::optional<lh::Client> client;
    {
      std::lock_guard lock(mu_);
      client = client_;
    }
    for (auto& w : All<WatchHandle>()) w->stop = true;
    // End the waits that still run, until their requests answered (a wait
    // may be sent after a Cancel: ask again).
    const auto until = Clock::now() + milliseconds(1'500);
    while (client && requests_.load() > 0 && Clock::now() < until) {
      for (auto& s : All<SessionHandle>()) (void)client->Cancel(s->id);
      std::this_thread::sleep_for(milliseconds(150));
    }
    CloseHandles();
    // A watch returns at its next event; make one in each namespace still
    // watched: a lock taken and released by a session of our own.
    while (client) {
      std::vector<std::string> watched;
      for (auto& w : All<WatchHandle>()) {
        if (!w->done) watched.push_back(w->ns);
      }
      if (watched.empty()) break;
      for (const std::string& ns : watched) Wake(*client, ns);
      std::this_thread::sleep_for(milliseconds(500));
    }
  }

  // Destroys every handle: checkouts are checked in, sessions ended (with
  // their locks). Late handles (made by a request that finished after
  // CloseAll took them) go at the final call.
  void CloseHandles() {
    std::map<std::string, std::shared_ptr<Handle>> handles;
    {
      std::lock_guard lock(mu_);
      for (auto& [name, h] : handles_) {
        // Watches stay listed: CloseAll wakes the ones still running.
        if (!std::dynamic_pointer_cast<WatchHandle>(h)) handles[name] = h;
      }
      for (auto& [name, h] : handles) handles_.erase(name);
    }
    for (auto& [name, h] : handles) {
      if (auto c = std::dynamic_pointer_cast<CheckoutHandle>(h)) {
        std::lock_guard lock(c->mu);
        c->guard.reset();
      }
    }
    for (auto& [name, h] : handles) {
      if (auto s = std::dynamic_pointer_cast<SessionHandle>(h)) {
        std::lock_guard lock(s->mu);
        s->session.reset();
      }
    }
    for (auto& [name, h] : handles) {
      if (auto l = std::dynamic_pointer_cast<LockHandle>(h)) {
        std::lock_guard lock(l->mu);
        l->lock.reset();
        l->slot.reset();
      }
    }
  }

  // After every thread finished.
  void Finish() {
    CloseHandles();
    std::lock_guard lock(mu_);
    handles_.clear();
    client_.reset();
  }

 private:
  json::object Run(const json::object& req) {
    const std::string op = Str(req, "op");
    if (op == "client") return MakeClient(req);
    if (op == "session") return StartSession(req);
    if (op == "end_session") return EndSession(req);
    if (op == "lock") return Lock(req);
    if (op == "semaphore") return Semaphore(req);
    if (op == "release") return Release(req);
    if (op == "checkout") return Checkout(req);
    if (op == "save") return Save(req);
    if (op == "checkin") return Checkin(req);
    if (op == "put") return Put(req);
    if (op == "get") return Get(req);
    if (op == "fenced_save") return FencedSave(req);
    if (op == "watch") return Watch(req);
    if (op == "stop_watch") return StopWatch(req);
    throw Failure{json::object{{"kind", "unsupported"},
                               {"message", "no op \"" + op + "\""}}};
  }

  // --- the handle table ---

  lh::Client TheClient() {
    std::lock_guard lock(mu_);
    if (!client_) throw DriverError("no client yet (op \"client\" first)");
    return *client_;
  }

  template <typename T>
  std::shared_ptr<T> Find(const std::string& name) {
    std::lock_guard lock(mu_);
    auto it = handles_.find(name);
    if (it == handles_.end()) throw DriverError("no handle \"" + name + "\"");
    auto h = std::dynamic_pointer_cast<T>(it->second);
    if (!h) throw DriverError("handle \"" + name + "\" is of another kind");
    return h;
  }

  template <typename T>
  std::vector<std::shared_ptr<T>> All() {
    std::vector<std::shared_ptr<T>> out;
    std::lock_guard lock(mu_);
    for (auto& [name, h] : handles_) {
      if (auto t = std::dynamic_pointer_cast<T>(h)) out.push_back(t);
    }
    return out;
  }

  void Name(const std::string& name, std::shared_ptr<Handle> h) {
    std::lock_guard lock(mu_);
    if (!handles_.emplace(name, std::move(h)).second) {
      throw DriverError("handle \"" + name + "\" exists already");
    }
  }

  // --- ops ---

  json::object MakeClient(const json::object& req) {
    lh::ClientOptions options;
    options.url = Str(req, "url");
    // As the CLI does: the library reads no environment, a program does.
    auto from_env = [](const char* name) {
      const char* value = std::getenv(name);
      return std::string(value != nullptr ? value : "");
    };
    options.ca_file = from_env("LEASEHOLD_CA_FILE");
    options.cert_file = from_env("LEASEHOLD_CERT");
    options.key_file = from_env("LEASEHOLD_KEY");
    if (const json::value* t = req.if_contains("io_timeout_ms");
        t && !t->is_null()) {
      options.io_timeout = Ms(req, "io_timeout_ms");
    }
    auto client = lh::Client::Create(std::move(options));
    if (!client) throw Fail(client.error(), Source::kCall);
    std::lock_guard lock(mu_);
    client_ = std::move(*client);
    return {};
  }

  json::object StartSession(const json::object& req) {
    const std::string as = Str(req, "as");
    auto h = std::make_shared<SessionHandle>();
    h->loss = std::make_shared<SessionLoss>();
    // The callbacks run on the keepalive thread and touch only what they
    // hold (never the handle table, whose users may be ending the session).
    auto session = TheClient().StartSession(
        Str(req, "name"), Ms(req, "ttl_ms"),
        [as, loss = h->loss](const lh::Error&) { loss->Lost(as); },
        [as] { Signal("locks_lost", as); },
        [loss = h->loss](const lh::LostHold& taken) {
          loss->TakenBack(taken);
        });
    if (!session) throw Fail(session.error(), Source::kSession);
    h->id = session->id();
    h->session = std::move(*session);
    const std::string id = h->id;
    Name(as, std::move(h));
    return {{"session", id}};
  }

  json::object EndSession(const json::object& req) {
    auto h = Find<SessionHandle>(Str(req, "session"));
    std::lock_guard lock(h->mu);
    if (!h->session) throw DriverError("the session was closed");
    auto r = h->session->End();
    if (!r) throw Fail(r.error(), Source::kSession);
    return {};
  }

  json::object Lock(const json::object& req) {
    const std::string as = Str(req, "as");
    auto s = Find<SessionHandle>(Str(req, "session"));
    auto h = std::make_shared<LockHandle>();
    h->ns = Str(req, "ns");
    h->name = Str(req, "resource");
    lh::AcquireOptions options;
    options.mode = Str(req, "mode");
    options.owner = "Session";
    options.timeout = Ms(req, "timeout_ms");
    std::uint64_t fence = 0;
    bool waited = false;
    {
      // Waits holding the session's mutex only (it belongs to one thread).
      std::lock_guard lock(s->mu);
      if (!s->session) throw DriverError("the session was closed");
      auto guard = s->session->Lock(h->ns, h->name, options);
      if (!guard) throw Fail(guard.error(), Source::kSession);
      fence = guard->fence();
      waited = guard->waited();
      h->lock = std::move(*guard);
    }
    s->loss->Add(as, h->ns, h->name, "applock", h->released);
    Name(as, std::move(h));
    return {{"fence", fence}, {"mode", options.mode}, {"waited", waited}};
  }

  json::object Semaphore(const json::object& req) {
    const std::string as = Str(req, "as");
    auto s = Find<SessionHandle>(Str(req, "session"));
    auto h = std::make_shared<LockHandle>();
    h->ns = Str(req, "ns");
    h->name = Str(req, "name");
    lh::SemaphoreOptions options;
    options.limit = Int(req, "limit");
    options.permits = Int(req, "permits");
    options.owner = "Session";
    options.timeout = Ms(req, "timeout_ms");
    std::uint64_t fence = 0;
    std::int64_t permits = 0;
    bool waited = false;
    {
      std::lock_guard lock(s->mu);
      if (!s->session) throw DriverError("the session was closed");
      auto guard = s->session->Permits(h->ns, h->name, options);
      if (!guard) throw Fail(guard.error(), Source::kSession);
      fence = guard->fence();
      permits = guard->permits();
      waited = guard->waited();
      h->slot = std::move(*guard);
    }
    s->loss->Add(as, h->ns, h->name, "semaphore", h->released);
    Name(as, std::move(h));
    return {{"fence", fence}, {"permits", permits}, {"waited", waited}};
  }

  json::object Release(const json::object& req) {
    auto h = Find<LockHandle>(Str(req, "handle"));
    std::lock_guard lock(h->mu);
    h->released->store(true);
    lh::Result<void> r;
    if (h->lock) {
      r = h->lock->Release();
    } else if (h->slot) {
      r = h->slot->Release();
    } else {
      throw DriverError("the handle was closed");
    }
    if (!r) throw Fail(r.error(), Source::kGuard);
    return {};
  }

  json::object Checkout(const json::object& req) {
    const std::string as = Str(req, "as");
    lh::CheckoutOptions options;
    options.owner = Str(req, "owner");
    options.ttl = Ms(req, "ttl_ms");
    auto guard = TheClient().CheckoutKey(
        Str(req, "ns"), Str(req, "key"), std::move(options),
        [as](const lh::Error&) { Signal("lost", as); });
    if (!guard) throw Fail(guard.error(), Source::kGuard);
    auto h = std::make_shared<CheckoutHandle>();
    json::object ok{{"token", guard->token()}, {"fence", guard->fence()}};
    h->guard = std::move(*guard);
    Name(as, std::move(h));
    return ok;
  }

  json::object Save(const json::object& req) {
    auto h = Find<CheckoutHandle>(Str(req, "handle"));
    const std::string body = Str(req, "body");
    std::lock_guard lock(h->mu);
    if (!h->guard) throw DriverError("the checkout was closed");
    auto r = h->guard->Save(body);
    if (!r) throw Fail(r.error(), Source::kGuard);
    if (!r->done) throw WriteRefused(r->reason, "save");
    return {{"version", r->version}};
  }

  json::object Checkin(const json::object& req) {
    auto h = Find<CheckoutHandle>(Str(req, "handle"));
    std::lock_guard lock(h->mu);
    if (!h->guard) throw DriverError("the checkout was closed");
    auto r = h->guard->Checkin();
    if (!r) throw Fail(r.error(), Source::kGuard);
    return {};
  }

  json::object Put(const json::object& req) {
    auto r = TheClient().Put(Str(req, "ns"), Str(req, "key"), Str(req, "body"));
    if (!r) throw Fail(r.error(), Source::kCall);
    return {{"version", *r}};
  }

  json::object Get(const json::object& req) {
    auto r = TheClient().Get(Str(req, "ns"), Str(req, "key"));
    if (!r) throw Fail(r.error(), Source::kCall);
    return {{"body", OptionalString(r->body)},
            {"version", r->version},
            {"locked_by", OptionalString(r->locked_by)},
            {"state", r->state}};
  }

  json::object FencedSave(const json::object& req) {
    lh::Proof proof;
    proof.fence = static_cast<std::uint64_t>(Int(req, "fence"));
    const std::string key = Str(req, "key");
    auto r = TheClient().Save(Str(req, "ns"), key, proof, Str(req, "body"));
    if (!r) throw Fail(r.error(), Source::kCall);
    if (!r->done) throw WriteRefused(r->reason, "fenced save of " + key);
    return {{"version", r->version}};
  }

  json::object Watch(const json::object& req) {
    const std::string as = Str(req, "as");
    auto h = std::make_shared<WatchHandle>();
    h->ns = Str(req, "ns");
    lh::Client client = TheClient();
    if (closing_) throw DriverError("closing");
    Name(as, h);
    threads_.Spawn([client, h, as]() mutable {
      auto r = client.Watch(h->ns, [&](const lh::Event& e) {
        if (h->stop) return false;
        WriteLine({{"event", "watch"},
                   {"of", as},
                   {"type", e.type},
                   {"data", e.data}});
        return !h->stop.load();
      });
      json::value error = nullptr;
      if (!r) error = ErrorObject(r.error(), Source::kCall);
      WriteLine({{"event", "watch_end"}, {"of", as}, {"error", error}});
      h->done = true;
    });
    return {};
  }

  json::object StopWatch(const json::object& req) {
    Find<WatchHandle>(Str(req, "handle"))->stop = true;
    return {};
  }

  // An event in `ns` for a watch to return at (see CloseAll).
  static void Wake(lh::Client& client, const std::string& ns) {
    auto s = client.OpenSession("conformance-driver-wake", milliseconds(5'000));
    if (!s) return;
    lh::AcquireOptions options;
    options.timeout = milliseconds(0);
    (void)client.Acquire(ns, s->id, "conformance-driver-wake", options);
    (void)client.EndSession(s->id);  // releases it
  }

  std::atomic<bool> closing_{false};
  std::atomic<int> requests_{0};
  Threads threads_;
  std::mutex mu_;  // client_, handles_
  std::optional<lh::Client> client_;
  std::map<std::string, std::shared_ptr<Handle>> handles_;
};

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a harness gone: writes fail, no signal
  if (argc > 1) {
    Log(std::string_view(argv[1]) == "--mutant"
            ? "this driver has no mutants"
            : "usage: conformance_driver_cpp");
    return 2;
  }

  Driver driver;
  std::string line;
  while (std::getline(std::cin, line)) {
    driver.threads().Reap();
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json::error_code ec;
    json::value v = json::parse(line, ec);
    if (ec || !v.is_object() || !v.get_object().contains("id")) {
      const json::value id =
          (!ec && v.is_object() && v.get_object().contains("id"))
              ? v.get_object().at("id")
              : json::value(nullptr);
      WriteLine({{"id", id},
                 {"error", json::object{{"kind", "driver"},
                                        {"message", "bad request line"}}}});
      continue;
    }
    json::object req = std::move(v.get_object());
    json::value id = req.at("id");
    driver.requests()++;
    driver.threads().Spawn([&driver, id = std::move(id), req = std::move(req)] {
      driver.Serve(id, req);
      driver.requests()--;
    });
  }

  // stdin closed: close what we hold, within a few seconds.
  std::atomic<bool> closed{false};
  std::thread closer([&] {
    driver.CloseAll();
    closed = true;
  });
  const auto until = Clock::now() + milliseconds(4'000);
  while ((!closed || driver.threads().Running() > 0) && Clock::now() < until) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  if (!closed || driver.threads().Running() > 0) {
    Log("stdin closed: gave up waiting for " +
        std::to_string(driver.threads().Running()) +
        " request(s) or watch(es); exiting");
    {
      std::lock_guard lock(out_mu);
      std::fflush(stdout);
    }
    closer.detach();
    driver.threads().Abandon();
    std::_Exit(0);
  }
  closer.join();
  driver.threads().Reap();
  driver.Finish();
  return 0;
}
