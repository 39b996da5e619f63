// yaml_to_json IN OUT: writes the YAML document IN as JSON to OUT. A build
// tool (docs/openapi.yaml becomes the JSON that GET /v1/openapi.json
// serves), so that the build needs neither network nor npm.
//
// Plain scalars are read by YAML 1.2's core schema (null, true/false,
// integers, floats, else strings); quoted and block scalars are strings.
// Keys must be scalars and appear once per mapping. Exits 1 with a message
// naming the line when the document is outside that.
#include <yaml-cpp/yaml.h>

#include <boost/json.hpp>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace {

namespace json = boost::json;

std::runtime_error At(const YAML::Node& node, const std::string& what) {
  return std::runtime_error("line " + std::to_string(node.Mark().line + 1) +
                            ": " + what);
}

bool OneOf(const std::string& s, std::initializer_list<std::string_view> set) {
  for (std::string_view v : set) {
    if (s == v) return true;
  }
  return false;
}

// A plain scalar by the core schema's resolution rules.
json::value PlainScalar(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (OneOf(s, {"", "~", "null", "Null", "NULL"})) return nullptr;
  if (OneOf(s, {"true", "True", "TRUE"})) return true;
  if (OneOf(s, {"false", "False", "FALSE"})) return false;
  if (OneOf(s, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf",
                "-.Inf", "-.INF", ".nan", ".NaN", ".NAN"})) {
    throw At(node, "JSON has no " + s);
  }
  // Numbers: only digits, signs, '.', 'e' and 'E', parsed whole.
  if (s.find_first_not_of("0123456789+-.eE") != std::string::npos) {
    return json::string(s);
  }
  const char* first = s.data() + (s.front() == '+' ? 1 : 0);
  const char* last = s.data() + s.size();
  if (s.find_first_of(".eE") == std::string::npos) {
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(first, last, v);
    if (end == last && ec == std::errc::result_out_of_range) {
      throw At(node, "integer out of range: " + s);
    }
    if (end == last && ec == std::errc()) return v;
    return json::string(s);
  }
  double d = 0;
  auto [end, ec] = std::from_chars(first, last, d);
  if (end == last && ec == std::errc()) return d;
  return json::string(s);
}

json::value Convert(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Scalar: {
      const std::string& tag = node.Tag();
      if (tag == "!" || tag == "tag:yaml.org,2002:str") {
        return json::string(node.Scalar());
      }
      if (tag != "?") throw At(node, "unsupported tag " + tag);
      return PlainScalar(node);
    }
    case YAML::NodeType::Sequence: {
      json::array out;
      for (const YAML::Node& item : node) out.push_back(Convert(item));
      return out;
    }
    case YAML::NodeType::Map: {
      json::object out;
      for (const auto& entry : node) {
        if (!entry.first.IsScalar()) {
          throw At(entry.first, "a mapping key must be a scalar");
        }
        const std::string& key = entry.first.Scalar();
        if (out.contains(key)) throw At(entry.first, "duplicate key " + key);
        out[key] = Convert(entry.second);
      }
      return out;
    }
    case YAML::NodeType::Undefined:
      break;
  }
  throw At(node, "undefined node");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: yaml_to_json IN.yaml OUT.json\n";
    return 2;
  }
  try {
    const json::value doc = Convert(YAML::LoadFile(argv[1]));
    std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
    out << json::serialize(doc) << '\n';
    out.close();
    if (!out) throw std::runtime_error(std::string("cannot write ") + argv[2]);
  } catch (const std::exception& e) {
    std::cerr << "yaml_to_json: " << argv[1] << ": " << e.what() << '\n';
    std::remove(argv[2]);
    return 1;
  }
  return 0;
}
