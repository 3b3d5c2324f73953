#include <string>
namespace kv {
class Store {
 public:
  int get(const std::string& k) {
    if (k.empty()) { throw std::runtime_error("empty key"); }
    for (int i = 0; i < 3; ++i) { LOG(ERROR) << "retry " << i; }
    return 0;
  }
};
}  // namespace kv
