#include "common/metrics/metrics_registry.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace phaseloop::metrics {
namespace {

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "MetricsRegistry: %s\n", message.c_str());
  std::abort();
}

bool IsNameChar(char c, bool first, bool colon) {
  const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                      c == '_' || (colon && c == ':');
  return letter || (!first && c >= '0' && c <= '9');
}

bool IsValidName(const std::string& name, bool colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (!IsNameChar(name[i], i == 0, colon)) return false;
  }
  return true;
}

void AppendEscaped(std::string& out, const std::string& text, bool quotes) {
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quotes && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void AppendSeries(std::string& out, const std::string& name,
                  const std::map<std::string, std::string>& labels,
                  double value) {
  out += name;
  if (!labels.empty()) {
    out += '{';
    bool first = true;
    for (const auto& [key, label_value] : labels) {
      if (!first) out += ',';
      first = false;
      out += key;
      out += "=\"";
      AppendEscaped(out, label_value, /*quotes=*/true);
      out += '"';
    }
    out += '}';
  }
  out += ' ';
  out += FormatValue(value);
  out += '\n';
}

}  // namespace

bool IsValidMetricName(const std::string& name) {
  return IsValidName(name, /*colon=*/true);
}

bool IsValidLabelName(const std::string& name) {
  return IsValidName(name, /*colon=*/false) && name.rfind("__", 0) != 0;
}

void Counter::Increment(double v) {
  if (!(v >= 0)) return;  // negative or NaN
  double current = value_.load(std::memory_order_relaxed);
  while (!value_.compare_exchange_weak(current, current + v,
                                       std::memory_order_relaxed)) {
  }
}

void Gauge::Add(double v) {
  double current = value_.load(std::memory_order_relaxed);
  while (!value_.compare_exchange_weak(current, current + v,
                                       std::memory_order_relaxed)) {
  }
}

MetricsRegistry::Family& MetricsRegistry::FamilyFor(
    const std::string& name, const std::string& help,
    const std::map<std::string, std::string>& labels, Type type) {
  if (!IsValidMetricName(name)) {
    Die("invalid metric name \"" + name + "\": use [a-zA-Z_:][a-zA-Z0-9_:]*");
  }
  for (const auto& [key, value] : labels) {
    if (!IsValidLabelName(key)) {
      Die("metric " + name + ": invalid label name \"" + key +
          "\": use [a-zA-Z_][a-zA-Z0-9_]*, not starting with __");
    }
  }
  auto [it, inserted] = families_.try_emplace(name);
  Family& family = it->second;
  if (inserted) {
    family.type = type;
    family.help = help;
  } else if (family.type != type) {
    Die("metric " + name + " registered as both a counter and a gauge");
  } else if (family.help != help) {
    Die("metric " + name + " registered with two help texts");
  }
  return family;
}

Counter& MetricsRegistry::AddCounter(
    const std::string& name, const std::string& help,
    const std::map<std::string, std::string>& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = FamilyFor(name, help, labels, Type::kCounter).counters[labels];
  if (!slot) slot = std::make_unique<Counter>();
  return *slot;
}

Gauge& MetricsRegistry::AddGauge(
    const std::string& name, const std::string& help,
    const std::map<std::string, std::string>& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = FamilyFor(name, help, labels, Type::kGauge).gauges[labels];
  if (!slot) slot = std::make_unique<Gauge>();
  return *slot;
}

std::string MetricsRegistry::RenderPrometheusText() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& [name, family] : families_) {
    out += "# HELP ";
    out += name;
    out += ' ';
    AppendEscaped(out, family.help, /*quotes=*/false);
    out += "\n# TYPE ";
    out += name;
    out += family.type == Type::kCounter ? " counter\n" : " gauge\n";
    for (const auto& [labels, counter] : family.counters) {
      AppendSeries(out, name, labels, counter->value());
    }
    for (const auto& [labels, gauge] : family.gauges) {
      AppendSeries(out, name, labels, gauge->value());
    }
  }
  return out;
}

}  // namespace phaseloop::metrics
