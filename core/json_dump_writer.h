// JSON written straight from a command's structs, byte for byte as
// nlohmann::json's dump() writes the same document built as a DOM: for the
// big outputs (a RAS report of 10^5 ranks), where the DOM costs more memory
// and time than the rest of the command. A writer calls Plain() on every
// string first and builds the DOM instead where one is not (escapes, UTF-8).
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fabtrack::json_out {

// A string nlohmann writes as is, between quotes: printable ASCII, no quote
// or backslash (no escape, no UTF-8 to check).
inline bool Plain(const std::string& s) {
  for (char c : s) {
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
  }
  return true;
}

// nlohmann's layout: compact ("[1,2]", "{"a":1}") or pretty (each element
// on its own line, `indent` spaces a level, "key": value); empty containers
// are "[]" either way. The caller writes keys in std::map order (sorted), as
// an nlohmann object holds them, and only strings that are Plain.
class DumpWriter {
 public:
  DumpWriter(std::string* out, int indent, size_t prefix)
      : out_(out), indent_(indent), prefix_(prefix) {}

  void Open(char bracket) {
    out_->push_back(bracket);
    ++depth_;
    first_ = true;
  }
  void Close(char bracket, bool empty) {
    --depth_;
    if (!empty) NewLine();
    out_->push_back(bracket);
    first_ = false;
  }
  // Before an element of an array, or a key of an object.
  void Next() {
    if (!first_) out_->push_back(',');
    first_ = false;
    NewLine();
  }
  void Key(const char* key) {
    Next();
    out_->push_back('"');
    out_->append(key);
    out_->append(indent_ < 0 ? "\":" : "\": ");
    first_ = true;  // the value follows the key, not an element
  }
  void String(const std::string& s) {
    first_ = false;
    out_->push_back('"');
    out_->append(s);
    out_->push_back('"');
  }
  void Number(int64_t n) {
    first_ = false;
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), n);
    out_->append(buf, end);
  }
  void Null() {
    first_ = false;
    out_->append("null");
  }
  void Bool(bool b) {
    first_ = false;
    out_->append(b ? "true" : "false");
  }
  void OptionalNumber(const std::optional<int64_t>& n) {
    if (n) {
      Number(*n);
    } else {
      Null();
    }
  }
  // A key and its value.
  void Field(const char* key, const std::string& value) {
    Key(key);
    String(value);
  }
  void Field(const char* key, int64_t value) {
    Key(key);
    Number(value);
  }
  void Field(const char* key, const std::optional<int64_t>& value) {
    Key(key);
    OptionalNumber(value);
  }
  void Field(const char* key, const std::vector<std::string>& values) {
    Key(key);
    Open('[');
    for (const std::string& v : values) {
      Element();
      String(v);
    }
    Close(']', values.empty());
  }
  // An array of objects, each one's fields written by `fields(item)`
  // between its braces (in the DOM's key order).
  template <typename Items, typename Fields>
  void Objects(const Items& items, Fields&& fields) {
    Open('[');
    for (const auto& item : items) {
      Element();
      Open('{');
      fields(item);
      Close('}', false);
    }
    Close(']', items.empty());
  }
  template <typename Items, typename Fields>
  void Field(const char* key, const Items& items, Fields&& fields) {
    Key(key);
    Objects(items, fields);
  }
  // Where a rank runs, in the DOM's key order: "gpu", "host", "node".
  void Place(const std::string& gpu, const std::string& host, const std::string& node) {
    Field("gpu", gpu);
    Field("host", host);
    Field("node", node);
  }
  // An array element that is a value: Next(), then the value.
  void Element() { Next(); }

 private:
  void NewLine() {
    if (indent_ < 0) return;
    out_->push_back('\n');
    out_->append(prefix_ + static_cast<size_t>(depth_) * static_cast<size_t>(indent_), ' ');
  }
  std::string* out_;
  int indent_;
  size_t prefix_;
  int depth_ = 0;
  bool first_ = true;
};

}  // namespace fabtrack::json_out
