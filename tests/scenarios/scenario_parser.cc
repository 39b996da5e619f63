#include "tests/scenarios/scenario_parser.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <limits>
#include <set>
#include <span>
#include <utility>

#include "common/status.h"

namespace leasehold::scenarios {
namespace {

// ---------------------------------------------------------------------------
// Tokens

struct Token {
  std::string text;
  bool literal = false;  // began with a quote: never a keyword or an option
};

using Tokens = std::span<const Token>;

// A parse result whose error is a message; the caller adds the line number.
template <typename T>
using Parsed = std::expected<T, std::string>;

std::unexpected<std::string> Fail(std::string message) {
  return std::unexpected<std::string>(std::move(message));
}

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

// Appends the quoted part that starts at line[i] (just after the opening
// quote) to `out` and returns the index after the closing quote.
Parsed<std::size_t> ReadQuoted(std::string_view line, std::size_t i,
                               std::string& out) {
  while (i < line.size()) {
    char c = line[i++];
    if (c == '"') return i;
    if (c == '\\' && i < line.size()) c = line[i++];
    out += c;
  }
  return Fail("a quoted name has no closing \"");
}

// Splits a line into blank-separated words. "..." quotes a word (with \"
// and \\ inside); a word that begins with # starts a comment.
Parsed<std::vector<Token>> Tokenize(std::string_view line) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  while (true) {
    while (i < line.size() && IsBlank(line[i])) ++i;
    if (i == line.size() || line[i] == '#') return tokens;
    Token token;
    token.literal = line[i] == '"';
    while (i < line.size() && !IsBlank(line[i])) {
      if (line[i] != '"') {
        token.text += line[i++];
        continue;
      }
      auto next = ReadQuoted(line, i + 1, token.text);
      if (!next) return std::unexpected(next.error());
      i = *next;
    }
    tokens.push_back(std::move(token));
  }
}

bool IsWord(const Token& token, std::string_view word) {
  return !token.literal && token.text == word;
}

std::string Join(Tokens tokens) {
  std::string out;
  for (const Token& t : tokens) {
    if (!out.empty()) out += ' ';
    out += t.text;
  }
  return out;
}

std::optional<std::int64_t> ParseInt(std::string_view text) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  if (!text.empty() && text.front() == '+') return std::nullopt;
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

// ---------------------------------------------------------------------------
// Vocabulary

struct ModeWord {
  std::string_view name;
  std::string_view abbreviation;
  LockMode mode;
};

constexpr std::array<ModeWord, kLockModeCount> kModeWords = {{
    {"NoLock", "NL", LockMode::kNoLock},
    {"IntentShared", "IS", LockMode::kIntentShared},
    {"Shared", "S", LockMode::kShared},
    {"Update", "U", LockMode::kUpdate},
    {"IntentExclusive", "IX", LockMode::kIntentExclusive},
    {"SharedIntentExclusive", "SIX", LockMode::kSharedIntentExclusive},
    {"UpdateIntentExclusive", "UIX", LockMode::kUpdateIntentExclusive},
    {"Exclusive", "X", LockMode::kExclusive},
}};

struct Verb {
  std::string_view name;
  Action action;
  std::string_view usage;
};

constexpr std::array<Verb, 25> kVerbs = {{
    {"at", Action::kAdvance, "at MS"},
    {"session", Action::kOpenSession,
     "session NAME [ttl=MS] [priority=N] [-> ok | -> error CODE]"},
    {"namespace", Action::kNamespace, "namespace NS lock_delay=MS"},
    {"begin", Action::kBegin, "NAME begin [-> ok | -> error CODE]"},
    {"commit", Action::kCommit, "NAME commit [-> ok | -> error CODE]"},
    {"rollback", Action::kRollback, "NAME rollback [-> ok | -> error CODE]"},
    {"end", Action::kEnd, "NAME end [by=client|admin] [-> ok | -> error CODE]"},
    {"keepalive", Action::kKeepAlive, "NAME keepalive [-> ok | -> error CODE]"},
    {"priority", Action::kSetPriority,
     "NAME priority N [-> ok | -> error CODE]"},
    {"acquire", Action::kAcquire,
     "NAME acquire RESOURCE MODE [owner=Session|Transaction] [timeout=MS] "
     "[ns=NS] [principal=P] -> 0|-1|-3|waits|error CODE"},
    {"acquire-all", Action::kAcquireAll,
     "NAME acquire-all RESOURCE:MODE RESOURCE:MODE ... "
     "[owner=Session|Transaction] [timeout=MS] [ns=NS] [principal=P] -> "
     "0|1|-1|-3|waits|error CODE"},
    {"release", Action::kRelease,
     "NAME release RESOURCE [owner=Session|Transaction] [ns=NS] "
     "[principal=P] [-> ok | -> error CODE]"},
    {"mode", Action::kMode,
     "NAME mode RESOURCE [owner=...] [ns=NS] [principal=P] -> MODE"},
    {"count", Action::kCount,
     "NAME count RESOURCE [owner=...] [ns=NS] [principal=P] -> N"},
    {"test", Action::kTest,
     "NAME test RESOURCE MODE [owner=...] [ns=NS] [principal=P] -> "
     "true|false"},
    {"cancel", Action::kCancel, "NAME cancel -> true|false"},
    {"waiting", Action::kWaiting, "NAME waiting -> true|false"},
    {"locks", Action::kLocks, "NAME locks -> N"},
    {"queue", Action::kQueue,
     "queue RESOURCE [ns=NS] [principal=P] -> NAME NAME ... | none"},
    {"finished", Action::kFinished,
     "NAME finished 1|-1|-2|-3 [held=MODE] [count=N] [permits=N] "
     "[cycle=NAME,NAME,...]"},
    {"take", Action::kTake,
     "NAME take SEMAPHORE PERMITS limit=N [owner=Session|Transaction] "
     "[timeout=MS] [ns=NS] [principal=P] -> 0|-1|-3|waits|error CODE"},
    {"give", Action::kGive,
     "NAME give SEMAPHORE [permits=N] [owner=Session|Transaction] [ns=NS] "
     "[principal=P] [-> ok | -> LEFT | -> error CODE]"},
    {"permits", Action::kPermits,
     "NAME permits SEMAPHORE [owner=...] [ns=NS] [principal=P] -> N"},
    {"held", Action::kHeld, "held SEMAPHORE [ns=NS] [principal=P] -> N"},
    {"delay", Action::kDelay,
     "delay NAME [ns=NS] [principal=P] -> none | until=MS [permits=N]"},
}};

// Steps that no session takes: their first word is the verb, which
// therefore cannot name a session.
bool IsGlobal(Action action) {
  return action == Action::kAdvance || action == Action::kOpenSession ||
         action == Action::kNamespace || action == Action::kQueue ||
         action == Action::kHeld || action == Action::kDelay;
}

const Verb* GlobalVerb(const Token& word) {
  for (const Verb& verb : kVerbs) {
    if (IsGlobal(verb.action) && IsWord(word, verb.name)) return &verb;
  }
  return nullptr;
}

const Verb& VerbOf(Action action) {
  for (const Verb& verb : kVerbs) {
    if (verb.action == action) return verb;
  }
  return kVerbs.front();
}

std::string Usage(Action action) {
  return "write it as `" + std::string(VerbOf(action).usage) + "`";
}

std::optional<LockOwner> ParseOwnerName(std::string_view text) {
  if (EqualsIgnoringCase(text, "Transaction")) return LockOwner::kTransaction;
  if (EqualsIgnoringCase(text, "Session")) return LockOwner::kSession;
  return std::nullopt;
}

const std::set<std::string, std::less<>>& ErrorCodes() {
  static const auto* codes = [] {
    auto* set = new std::set<std::string, std::less<>>;
    for (int c = 1; c <= static_cast<int>(StatusCode::kInternal); ++c) {
      set->emplace(StatusCodeName(static_cast<StatusCode>(c)));
    }
    return set;
  }();
  return *codes;
}

std::string ListErrorCodes() {
  std::string out;
  for (const std::string& code : ErrorCodes()) {
    if (!out.empty()) out += ", ";
    out += code;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Arguments: positional words, then key=value options, in any order.

struct Args {
  std::vector<std::string> positional;
  std::vector<std::pair<std::string, std::string>> options;
};

Parsed<Args> SplitArgs(Tokens tokens, Action action, std::size_t positional,
                       std::initializer_list<std::string_view> allowed) {
  Args args;
  for (const Token& token : tokens) {
    std::size_t eq = token.text.find('=');
    if (token.literal || eq == std::string::npos) {
      args.positional.push_back(token.text);
      continue;
    }
    std::string key = token.text.substr(0, eq);
    if (std::ranges::find(allowed, key) == allowed.end()) {
      return Fail("unknown option `" + key + "=`; " + Usage(action));
    }
    for (const auto& [seen, value] : args.options) {
      if (seen == key) return Fail("option `" + key + "=` is given twice");
    }
    args.options.emplace_back(key, token.text.substr(eq + 1));
  }
  if (args.positional.size() != positional) {
    return Fail("`" + std::string(VerbOf(action).name) + "` takes " +
                std::to_string(positional) + " word(s) before its options, " +
                "got " + std::to_string(args.positional.size()) + "; " +
                Usage(action));
  }
  return args;
}

Parsed<std::int64_t> IntOption(std::string_view key, std::string_view value) {
  auto number = ParseInt(value);
  if (!number) {
    return Fail("`" + std::string(key) + "=` needs a whole number, got `" +
                std::string(value) + "`");
  }
  return *number;
}

// A count of permits or a limit: the engine takes 32 bits, and refuses
// (bad_request) what is out of its range, such as 0.
Parsed<std::int64_t> PermitOption(std::string_view key,
                                  std::string_view value) {
  auto number = ParseInt(value);
  constexpr auto kMost = std::numeric_limits<std::uint32_t>::max();
  if (!number || *number < 0 || *number > kMost) {
    return Fail("`" + std::string(key) + "=` needs a number of permits, 0.." +
                std::to_string(kMost) + ", got `" + std::string(value) + "`");
  }
  return *number;
}

Parsed<LockMode> RequestedMode(std::string_view text) {
  auto mode = ParseModeName(text);
  if (!mode) {
    return Fail("unknown lock mode `" + std::string(text) +
                "`; use IntentShared, Shared, Update, IntentExclusive, "
                "Exclusive (or IS, S, U, IX, X)");
  }
  return *mode;
}

// Applies the options that name a lock (ns, principal) and its owner.
Parsed<bool> ApplyLockOption(Step& step, const std::string& key,
                             const std::string& value) {
  if (key == "ns") {
    step.target.ns = value;
  } else if (key == "principal") {
    step.target.principal = value;
  } else if (key == "owner") {
    auto owner = ParseOwnerName(value);
    if (!owner) {
      return Fail("`owner=` is Session or Transaction, got `" + value + "`");
    }
    step.owner = *owner;
  } else {
    return false;
  }
  return true;
}

// Applies a lock request's options: `timeout=` and those of ApplyLockOption.
Parsed<bool> ApplyRequestOptions(
    Step& step,
    const std::vector<std::pair<std::string, std::string>>& options) {
  for (const auto& [key, value] : options) {
    if (key == "timeout") {
      auto number = IntOption(key, value);
      if (!number) return std::unexpected(number.error());
      step.timeout_ms = *number;
      continue;
    }
    auto applied = ApplyLockOption(step, key, value);
    if (!applied) return applied;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Expectations (the words after `->`, or after `finished`)

using ExpectTokens = std::optional<Tokens>;  // empty: the line has no `->`

bool IsErrorExpect(Tokens e) { return !e.empty() && IsWord(e[0], "error"); }

Parsed<Expectation> ErrorExpect(Tokens e) {
  if (e.size() != 2) {
    return Fail(
        "write an expected error as `-> error CODE`, e.g. "
        "`-> error not_held`");
  }
  if (!ErrorCodes().contains(e[1].text)) {
    return Fail("unknown error code `" + e[1].text +
                "`; known codes: " + ListErrorCodes());
  }
  Expectation x;
  x.kind = Expectation::Kind::kError;
  x.error = e[1].text;
  return x;
}

Parsed<Tokens> Required(ExpectTokens e, Action action) {
  if (!e) {
    return Fail("`" + std::string(VerbOf(action).name) +
                "` checks something, so it needs `->` and the expected "
                "answer; " +
                Usage(action));
  }
  return *e;
}

// `-> ok`, `-> error CODE`, or nothing (which means ok).
Parsed<Expectation> StatusExpect(ExpectTokens e) {
  if (!e) return Expectation{};
  if (IsErrorExpect(*e)) return ErrorExpect(*e);
  if (e->size() == 1 && IsWord((*e)[0], "ok")) return Expectation{};
  return Fail("expected `-> ok` or `-> error CODE`, got `-> " + Join(*e) + "`");
}

Parsed<Expectation> BoolExpect(ExpectTokens opt, Action action) {
  auto e = Required(opt, action);
  if (!e) return std::unexpected(e.error());
  if (IsErrorExpect(*e)) return ErrorExpect(*e);
  Expectation x;
  x.kind = Expectation::Kind::kBool;
  if (e->size() == 1 && IsWord((*e)[0], "true")) {
    x.flag = true;
  } else if (e->size() != 1 || !IsWord((*e)[0], "false")) {
    return Fail("expected `-> true`, `-> false` or `-> error CODE`, got `-> " +
                Join(*e) + "`");
  }
  return x;
}

Parsed<Expectation> ModeExpect(ExpectTokens opt, Action action) {
  auto e = Required(opt, action);
  if (!e) return std::unexpected(e.error());
  if (IsErrorExpect(*e)) return ErrorExpect(*e);
  auto mode = e->size() == 1 ? ParseModeName((*e)[0].text) : std::nullopt;
  if (!mode) {
    return Fail("expected a mode such as `-> Shared` or `-> NoLock`, got `-> " +
                Join(*e) + "`");
  }
  Expectation x;
  x.kind = Expectation::Kind::kMode;
  x.mode = *mode;
  return x;
}

// give: `-> ok` (or nothing), `-> error CODE`, or `-> N`, the permits the
// owner holds after giving back.
Parsed<Expectation> LeftExpect(ExpectTokens e) {
  if (!e || IsErrorExpect(*e)) return StatusExpect(e);
  if (e->size() == 1 && IsWord((*e)[0], "ok")) return Expectation{};
  auto number = e->size() == 1 ? ParseInt((*e)[0].text) : std::nullopt;
  if (!number || *number < 0) {
    return Fail(
        "expected `-> ok`, `-> error CODE` or the permits left, such as "
        "`-> 1`, got `-> " +
        Join(*e) + "`");
  }
  Expectation x;
  x.kind = Expectation::Kind::kNumber;
  x.number = *number;
  return x;
}

// delay: `-> none`, or `-> until=MS [permits=N]`.
Parsed<Expectation> DelayExpect(ExpectTokens opt) {
  auto e = Required(opt, Action::kDelay);
  if (!e) return std::unexpected(e.error());
  Expectation x;
  x.kind = Expectation::Kind::kDelay;
  if (e->size() == 1 && IsWord((*e)[0], "none")) return x;
  for (const Token& token : *e) {
    const std::size_t eq = token.text.find('=');
    const std::string key = token.text.substr(0, eq);
    auto& field = key == "until" ? x.until_ms : x.permits;
    if (token.literal || eq == std::string::npos ||
        (key != "until" && key != "permits") || field) {
      return Fail("expected `-> none` or `-> until=MS [permits=N]`, got `-> " +
                  Join(*e) + "`");
    }
    auto number = ParseInt(token.text.substr(eq + 1));
    if (!number || *number < 0) {
      return Fail("`" + key + "=` needs a number >= 0, got `" +
                  token.text.substr(eq + 1) + "`");
    }
    field = *number;
  }
  if (!x.until_ms) {
    return Fail("a lock-delay is `-> until=MS`, the instant it ends (and " +
                std::string("`permits=N` for a semaphore), or `-> none`"));
  }
  return x;
}

Parsed<Expectation> NumberExpect(ExpectTokens opt, Action action) {
  auto e = Required(opt, action);
  if (!e) return std::unexpected(e.error());
  if (IsErrorExpect(*e)) return ErrorExpect(*e);
  auto number = e->size() == 1 ? ParseInt((*e)[0].text) : std::nullopt;
  if (!number || *number < 0) {
    return Fail("expected a count such as `-> 2`, got `-> " + Join(*e) + "`");
  }
  Expectation x;
  x.kind = Expectation::Kind::kNumber;
  x.number = *number;
  return x;
}

// ---------------------------------------------------------------------------
// The parser: one line at a time, remembering the time and the sessions.

class Parser {
 public:
  std::expected<Scenario, ParseError> Parse(std::string_view text);

 private:
  Parsed<std::optional<Step>> ParseLine(std::string_view line, int number);
  Parsed<Tokens> ParseTime(Step& step, Tokens tokens);
  Parsed<bool> ParseStep(Step& step, Tokens body, ExpectTokens expect);
  Parsed<bool> ParseGlobalStep(Step& step, Tokens args, ExpectTokens e);
  Parsed<bool> ParseOpenSession(Step& step, Tokens args, ExpectTokens e);
  Parsed<bool> ParseNamespace(Step& step, Tokens args, ExpectTokens e);
  Parsed<bool> ParseNameQuery(Step& step, Tokens args, ExpectTokens e);
  Parsed<bool> ParseSessionStep(Step& step, Tokens args, ExpectTokens e);
  Parsed<bool> ParseEnd(Step& step, Tokens args, ExpectTokens e);
  Parsed<bool> ParseLockStep(Step& step, Tokens args, ExpectTokens e);
  Parsed<bool> ParseSemaphoreStep(Step& step, Tokens args, ExpectTokens e);
  Parsed<bool> ParseFinished(Step& step, Tokens args, ExpectTokens e);
  Parsed<bool> ParseAcquireAll(Step& step, Tokens args, ExpectTokens e);
  Parsed<Expectation> AcquireExpect(ExpectTokens opt, Action action);
  Parsed<Expectation> ResultExpect(Tokens words, std::set<int> allowed,
                                   std::string_view context, Action action);
  Parsed<bool> ResultAttribute(Expectation& x, const std::string& key,
                               const std::string& value);
  Parsed<Expectation> NamesExpect(ExpectTokens opt);
  Parsed<bool> CheckKnownSession(const std::string& name) const;

  std::set<std::string, std::less<>> sessions_;
  std::int64_t now_ms_ = 0;
};

std::expected<Scenario, ParseError> Parser::Parse(std::string_view text) {
  Scenario scenario;
  int number = 0;
  while (!text.empty() || number == 0) {
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++number;
    auto step = ParseLine(line, number);
    if (!step) return std::unexpected(ParseError{number, step.error()});
    if (*step) scenario.steps.push_back(std::move(**step));
  }
  if (scenario.steps.empty()) {
    return std::unexpected(ParseError{0, "the scenario has no steps"});
  }
  return scenario;
}

Parsed<std::optional<Step>> Parser::ParseLine(std::string_view line,
                                              int number) {
  auto tokens = Tokenize(line);
  if (!tokens) return std::unexpected(tokens.error());
  if (tokens->empty()) return std::nullopt;
  Step step;
  step.line = number;
  step.text = Trim(line);
  auto rest = ParseTime(step, *tokens);
  if (!rest) return std::unexpected(rest.error());
  if (rest->empty()) return step;  // `at MS` alone: just let time pass

  auto arrow = std::ranges::find_if(
      *rest, [](const Token& t) { return IsWord(t, "->"); });
  Tokens body(rest->begin(), arrow);
  ExpectTokens expect;
  if (arrow != rest->end()) {
    expect = Tokens(arrow + 1, rest->end());
    if (expect->empty()) return Fail("nothing after `->`: say what to expect");
    if (std::ranges::any_of(*expect,
                            [](const Token& t) { return IsWord(t, "->"); })) {
      return Fail("a step has only one `->`");
    }
  }
  auto ok = ParseStep(step, body, expect);
  if (!ok) return std::unexpected(ok.error());
  return step;
}

// Reads an optional `at MS` prefix and returns the words after it.
Parsed<Tokens> Parser::ParseTime(Step& step, Tokens tokens) {
  step.at_ms = now_ms_;
  if (!IsWord(tokens[0], "at")) return tokens;
  auto ms = tokens.size() > 1 ? ParseInt(tokens[1].text) : std::nullopt;
  if (!ms || *ms < 0 || *ms > kLatestAtMs) {
    return Fail("`at` needs a time in milliseconds since the start, at most " +
                std::to_string(kLatestAtMs) + " (100 years), e.g. `at 100`");
  }
  if (*ms < now_ms_) {
    return Fail("time goes back: `at " + std::to_string(*ms) +
                "` comes after `at " + std::to_string(now_ms_) +
                "`; keep steps in time order");
  }
  now_ms_ = step.at_ms = *ms;
  return tokens.subspan(2);
}

Parsed<bool> Parser::ParseStep(Step& step, Tokens body, ExpectTokens expect) {
  if (body.empty()) return Fail("`->` needs a step before it");
  if (const Verb* global = GlobalVerb(body[0])) {
    step.action = global->action;
    return ParseGlobalStep(step, body.subspan(1), expect);
  }
  step.session = body[0].text;
  auto known = CheckKnownSession(step.session);
  if (!known) return known;
  if (body.size() < 2) {
    return Fail("`" + step.session + "` alone does nothing; add a step such " +
                "as `" + step.session + " acquire doc Shared -> 0`");
  }
  const Verb* verb = nullptr;
  for (const Verb& v : kVerbs) {
    if (IsWord(body[1], v.name) && !IsGlobal(v.action)) {
      verb = &v;
    }
  }
  if (verb == nullptr) {
    return Fail("unknown step `" + body[1].text +
                "`; sessions can: begin, commit, rollback, end, keepalive, "
                "priority, acquire, acquire-all, release, mode, count, test, "
                "cancel, waiting, locks, take, give, permits, finished");
  }
  step.action = verb->action;
  return ParseSessionStep(step, body.subspan(2), expect);
}

Parsed<bool> Parser::CheckKnownSession(const std::string& name) const {
  if (sessions_.contains(name)) return true;
  return Fail("unknown session `" + name + "`; open it first with `session " +
              name + " ttl=60000`");
}

Parsed<bool> Parser::ParseGlobalStep(Step& step, Tokens args, ExpectTokens e) {
  switch (step.action) {
    case Action::kOpenSession:
      return ParseOpenSession(step, args, e);
    case Action::kNamespace:
      return ParseNamespace(step, args, e);
    case Action::kQueue:
    case Action::kHeld:
    case Action::kDelay:
      return ParseNameQuery(step, args, e);
    default:
      return Fail("`at MS` comes once, first on its line");
  }
}

Parsed<bool> Parser::ParseOpenSession(Step& step, Tokens args, ExpectTokens e) {
  auto split = SplitArgs(args, step.action, 1, {"ttl", "priority"});
  if (!split) return std::unexpected(split.error());
  step.session = split->positional[0];
  for (const auto& [key, value] : split->options) {
    auto number = IntOption(key, value);
    if (!number) return std::unexpected(number.error());
    if (key == "ttl") step.ttl_ms = *number;
    if (key == "priority") step.priority = static_cast<int>(*number);
  }
  auto expect = StatusExpect(e);
  if (!expect) return std::unexpected(expect.error());
  step.expect = *expect;

  const std::string& name = step.session;
  bool well_formed = !name.empty() &&
                     std::isalpha(static_cast<unsigned char>(name[0])) &&
                     std::ranges::all_of(name, [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) ||
                              c == '_' || c == '-';
                     });
  if (!well_formed || GlobalVerb(Token{name}) != nullptr) {
    return Fail("`" + name +
                "` cannot name a session: use a word of letters, "
                "digits, _ and - that starts with a letter and is not `at`, "
                "`session`, `namespace`, `queue`, `held` or `delay`");
  }
  if (sessions_.contains(name)) {
    return Fail("session `" + name +
                "` is already declared; give each "
                "session its own name");
  }
  // A session that is expected not to open cannot act later.
  if (step.expect.kind == Expectation::Kind::kOk) sessions_.insert(name);
  return true;
}

// Options for the rest of the scenario; they check nothing.
Parsed<bool> Parser::ParseNamespace(Step& step, Tokens args, ExpectTokens e) {
  if (e) return Fail("`namespace` checks nothing: drop the `->`");
  auto split = SplitArgs(args, step.action, 1, {"lock_delay"});
  if (!split) return std::unexpected(split.error());
  step.target.ns = split->positional[0];
  if (split->options.empty()) {
    return Fail("`namespace` needs an option to set; " + Usage(step.action));
  }
  auto ms = IntOption("lock_delay", split->options[0].second);
  if (!ms) return std::unexpected(ms.error());
  if (*ms < 0) return Fail("`lock_delay=` is 0 (none) or more milliseconds");
  step.lock_delay_ms = *ms;
  return true;
}

// queue, held, delay: about one lock or semaphore, whoever holds it.
Parsed<bool> Parser::ParseNameQuery(Step& step, Tokens args, ExpectTokens e) {
  auto split = SplitArgs(args, step.action, 1, {"ns", "principal"});
  if (!split) return std::unexpected(split.error());
  step.target.resource = split->positional[0];
  for (const auto& [key, value] : split->options) {
    auto applied = ApplyLockOption(step, key, value);
    if (!applied) return applied;
  }
  auto expect = step.action == Action::kQueue  ? NamesExpect(e)
                : step.action == Action::kHeld ? NumberExpect(e, step.action)
                                               : DelayExpect(e);
  if (!expect) return std::unexpected(expect.error());
  step.expect = *expect;
  return true;
}

Parsed<Expectation> Parser::NamesExpect(ExpectTokens opt) {
  auto e = Required(opt, Action::kQueue);
  if (!e) return std::unexpected(e.error());
  Expectation x;
  x.kind = Expectation::Kind::kNames;
  if (e->size() == 1 && IsWord((*e)[0], "none")) return x;
  for (const Token& token : *e) {
    auto known = CheckKnownSession(token.text);
    if (!known) return std::unexpected(known.error());
    x.names.push_back(token.text);
  }
  return x;
}

Parsed<bool> Parser::ParseSessionStep(Step& step, Tokens args, ExpectTokens e) {
  Parsed<Expectation> expect = Expectation{};
  switch (step.action) {
    case Action::kBegin:
    case Action::kCommit:
    case Action::kRollback:
    case Action::kKeepAlive: {
      auto split = SplitArgs(args, step.action, 0, {});
      if (!split) return std::unexpected(split.error());
      expect = StatusExpect(e);
      break;
    }
    case Action::kSetPriority: {
      auto split = SplitArgs(args, step.action, 1, {});
      if (!split) return std::unexpected(split.error());
      auto number = IntOption("priority", split->positional[0]);
      if (!number) return std::unexpected(number.error());
      step.priority = static_cast<int>(*number);
      expect = StatusExpect(e);
      break;
    }
    case Action::kCancel:
    case Action::kWaiting: {
      auto split = SplitArgs(args, step.action, 0, {});
      if (!split) return std::unexpected(split.error());
      expect = BoolExpect(e, step.action);
      break;
    }
    case Action::kLocks: {
      auto split = SplitArgs(args, step.action, 0, {});
      if (!split) return std::unexpected(split.error());
      expect = NumberExpect(e, step.action);
      break;
    }
    case Action::kFinished:
      return ParseFinished(step, args, e);
    case Action::kAcquireAll:
      return ParseAcquireAll(step, args, e);
    case Action::kEnd:
      return ParseEnd(step, args, e);
    case Action::kTake:
    case Action::kGive:
    case Action::kPermits:
      return ParseSemaphoreStep(step, args, e);
    default:
      return ParseLockStep(step, args, e);
  }
  if (!expect) return std::unexpected(expect.error());
  step.expect = *expect;
  return true;
}

// `by=admin` ends it as an administrator would (a lock-delay applies).
Parsed<bool> Parser::ParseEnd(Step& step, Tokens args, ExpectTokens e) {
  auto split = SplitArgs(args, step.action, 0, {"by"});
  if (!split) return std::unexpected(split.error());
  for (const auto& [key, value] : split->options) {
    if (value != "client" && value != "admin") {
      return Fail("`by=` is client or admin, got `" + value + "`");
    }
    step.ended_by_administrator = value == "admin";
  }
  auto expect = StatusExpect(e);
  if (!expect) return std::unexpected(expect.error());
  step.expect = *expect;
  return true;
}

// acquire, release, mode, count, test: a resource, maybe a mode, options.
Parsed<bool> Parser::ParseLockStep(Step& step, Tokens args, ExpectTokens e) {
  bool takes_mode =
      step.action == Action::kAcquire || step.action == Action::kTest;
  auto split = step.action == Action::kAcquire
                   ? SplitArgs(args, step.action, 2,
                               {"owner", "timeout", "ns", "principal"})
                   : SplitArgs(args, step.action, takes_mode ? 2 : 1,
                               {"owner", "ns", "principal"});
  if (!split) return std::unexpected(split.error());
  step.target.resource = split->positional[0];
  if (takes_mode) {
    auto mode = RequestedMode(split->positional[1]);
    if (!mode) return std::unexpected(mode.error());
    step.mode = *mode;
  }
  if (auto applied = ApplyRequestOptions(step, split->options); !applied) {
    return applied;
  }
  Parsed<Expectation> expect = Expectation{};
  switch (step.action) {
    case Action::kAcquire:
      expect = AcquireExpect(e, step.action);
      break;
    case Action::kRelease:
      expect = StatusExpect(e);
      break;
    case Action::kMode:
      expect = ModeExpect(e, step.action);
      break;
    case Action::kCount:
      expect = NumberExpect(e, step.action);
      break;
    default:
      expect = BoolExpect(e, step.action);
      break;
  }
  if (!expect) return std::unexpected(expect.error());
  step.expect = *expect;
  return true;
}

// take, give, permits: a semaphore's name, the permits asked for (take),
// options.
Parsed<bool> Parser::ParseSemaphoreStep(Step& step, Tokens args,
                                        ExpectTokens e) {
  const bool take = step.action == Action::kTake;
  auto split =
      take ? SplitArgs(args, step.action, 2,
                       {"limit", "owner", "timeout", "ns", "principal"})
      : step.action == Action::kGive
          ? SplitArgs(args, step.action, 1,
                      {"permits", "owner", "ns", "principal"})
          : SplitArgs(args, step.action, 1, {"owner", "ns", "principal"});
  if (!split) return std::unexpected(split.error());
  step.target.resource = split->positional[0];
  if (take) {
    auto permits = PermitOption("PERMITS", split->positional[1]);
    if (!permits) return std::unexpected(permits.error());
    step.permits = *permits;
  }
  bool has_limit = false;
  std::vector<std::pair<std::string, std::string>> request_options;
  for (const auto& [key, value] : split->options) {
    if (key != "limit" && key != "permits") {
      request_options.emplace_back(key, value);
      continue;
    }
    auto number = PermitOption(key, value);
    if (!number) return std::unexpected(number.error());
    (key == "limit" ? step.limit : step.permits) = *number;
    has_limit = has_limit || key == "limit";
  }
  if (take && !has_limit) {
    return Fail("`take` needs the semaphore's `limit=N`; " +
                Usage(step.action));
  }
  if (auto applied = ApplyRequestOptions(step, request_options); !applied) {
    return applied;
  }
  auto expect = take                           ? AcquireExpect(e, step.action)
                : step.action == Action::kGive ? LeftExpect(e)
                                               : NumberExpect(e, step.action);
  if (!expect) return std::unexpected(expect.error());
  step.expect = *expect;
  return true;
}

// acquire-all: RESOURCE:MODE words (split at the last colon, so that a
// resource may hold colons), then the options of acquire.
Parsed<bool> Parser::ParseAcquireAll(Step& step, Tokens args, ExpectTokens e) {
  const auto words = std::ranges::count_if(args, [](const Token& t) {
    return t.literal || t.text.find('=') == std::string::npos;
  });
  auto split = SplitArgs(args, step.action, static_cast<std::size_t>(words),
                         {"owner", "timeout", "ns", "principal"});
  if (!split) return std::unexpected(split.error());
  if (split->positional.empty()) {
    return Fail("`acquire-all` needs at least one RESOURCE:MODE; " +
                Usage(step.action));
  }
  for (const std::string& word : split->positional) {
    const std::size_t colon = word.rfind(':');
    if (colon == std::string::npos) {
      return Fail("`" + word + "` is not RESOURCE:MODE, e.g. `doc:Shared`");
    }
    auto mode = RequestedMode(word.substr(colon + 1));
    if (!mode) return std::unexpected(mode.error());
    step.locks.emplace_back(word.substr(0, colon), *mode);
  }
  if (auto applied = ApplyRequestOptions(step, split->options); !applied) {
    return applied;
  }
  auto expect = AcquireExpect(e, step.action);
  if (!expect) return std::unexpected(expect.error());
  step.expect = *expect;
  return true;
}

Parsed<Expectation> Parser::AcquireExpect(ExpectTokens opt, Action action) {
  auto e = Required(opt, action);
  if (!e) return std::unexpected(e.error());
  if (IsErrorExpect(*e)) return ErrorExpect(*e);
  if (IsWord((*e)[0], "waits")) {
    if (e->size() != 1) {
      return Fail(
          "`-> waits` takes nothing after it; check the final result "
          "later with `finished`");
    }
    Expectation x;
    x.kind = Expectation::Kind::kWaits;
    return x;
  }
  if (action == Action::kAcquireAll) {
    // 1: a lock waited inline while a deadlock was resolved, then all came.
    return ResultExpect(*e, {0, 1, -1, -3},
                        "acquire-all answers at once with 0, 1, -1 or -3 (or "
                        "`waits`; the result of a call that waits comes "
                        "later, in a `finished` line)",
                        action);
  }
  return ResultExpect(*e, {0, -1, -3},
                      std::string(VerbOf(action).name) +
                          " answers at once with 0, -1 or -3 (or `waits`; "
                          "1 and -2 come later, in a `finished` line)",
                      action);
}

Parsed<bool> Parser::ParseFinished(Step& step, Tokens args, ExpectTokens e) {
  if (e) {
    return Fail("`finished` takes no `->`: write `" + step.session +
                " finished -1`");
  }
  auto expect =
      ResultExpect(args, {1, -1, -2, -3},
                   "a wait finishes with 1, -1, -2 or -3", step.action);
  if (!expect) return std::unexpected(expect.error());
  step.expect = *expect;
  return true;
}

// A result number followed by held=, count=, permits= and cycle= checks.
// A lock's grant has held= and count=, a semaphore's permits=; a finished
// wait may be either.
Parsed<Expectation> Parser::ResultExpect(Tokens words, std::set<int> allowed,
                                         std::string_view context,
                                         Action action) {
  auto result = words.empty() ? std::nullopt : ParseInt(words[0].text);
  if (!result || !allowed.contains(static_cast<int>(*result))) {
    return Fail("expected a result, got `" + Join(words) +
                "`: " + std::string(context));
  }
  Expectation x;
  x.kind = Expectation::Kind::kResult;
  x.result = static_cast<int>(*result);
  std::vector<std::string> seen;
  for (const Token& token : words.subspan(1)) {
    std::size_t eq = token.text.find('=');
    if (token.literal || eq == std::string::npos) {
      return Fail(
          "after the result only held=, count=, permits= and cycle= may "
          "follow, got `" +
          token.text + "`");
    }
    std::string key = token.text.substr(0, eq);
    if (std::ranges::find(seen, key) != seen.end()) {
      return Fail("`" + key + "=` is given twice");
    }
    seen.push_back(key);
    auto applied = ResultAttribute(x, key, token.text.substr(eq + 1));
    if (!applied) return std::unexpected(applied.error());
  }
  bool granted = x.result == 0 || x.result == 1;
  if ((x.held || x.count || x.permits) && !granted) {
    return Fail("held=, count= and permits= describe a grant (0 or 1)");
  }
  if (x.permits && action != Action::kTake && action != Action::kFinished) {
    return Fail(
        "permits= describes a semaphore's grant; a lock's has held= "
        "and count=");
  }
  if ((x.held || x.count) && action == Action::kTake) {
    return Fail(
        "held= and count= describe a lock's grant; a semaphore's has "
        "permits=");
  }
  if (x.cycle && x.result != -3) {
    return Fail("cycle= describes a deadlock (-3)");
  }
  return x;
}

Parsed<bool> Parser::ResultAttribute(Expectation& x, const std::string& key,
                                     const std::string& value) {
  if (key == "held") {
    auto mode = ParseModeName(value);
    if (!mode) return Fail("`held=` needs a mode name, got `" + value + "`");
    x.held = *mode;
  } else if (key == "count") {
    auto number = ParseInt(value);
    if (!number || *number < 1) {
      return Fail("`count=` needs a number >= 1, got `" + value + "`");
    }
    x.count = *number;
  } else if (key == "permits") {
    auto number = ParseInt(value);
    if (!number || *number < 1) {
      return Fail("`permits=` needs a number >= 1, got `" + value + "`");
    }
    x.permits = *number;
  } else if (key == "cycle") {
    std::vector<std::string> names;
    std::string_view rest = value;
    while (!rest.empty()) {
      std::size_t comma = rest.find(',');
      std::string name(rest.substr(0, comma));
      rest.remove_prefix(comma == std::string_view::npos ? rest.size()
                                                         : comma + 1);
      auto known = CheckKnownSession(name);
      if (!known) return known;
      names.push_back(name);
    }
    if (names.size() < 2) {
      return Fail(
          "`cycle=` lists the sessions in the cycle, at least two, "
          "e.g. `cycle=asha,ravi`");
    }
    x.cycle = std::move(names);
  } else {
    return Fail("unknown check `" + key +
                "=`; use held=, count=, permits= or cycle=");
  }
  return true;
}

}  // namespace

std::optional<LockMode> ParseModeName(std::string_view text) {
  for (const ModeWord& word : kModeWords) {
    if (EqualsIgnoringCase(text, word.name) ||
        EqualsIgnoringCase(text, word.abbreviation)) {
      return word.mode;
    }
  }
  return std::nullopt;
}

std::string_view ModeName(LockMode mode) {
  for (const ModeWord& word : kModeWords) {
    if (word.mode == mode) return word.name;
  }
  return "?";
}

std::expected<Scenario, ParseError> ParseScenario(std::string_view text) {
  return Parser().Parse(text);
}

}  // namespace leasehold::scenarios
