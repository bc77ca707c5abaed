// A C++ program whose threads contend for one std::mutex through a class template, a lambda and std::thread:
// the frames a C++ server's stacks have (templates, namespaces, lambdas, libstdc++), for the demangling test.
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace shop {

template <typename T>
class Ledger {
public:
    __attribute__((noinline)) void post(T amount) {
        std::lock_guard<std::mutex> guard(lock_);
        for (int i = 0; i < 200; i++) total_ += amount ^ i;
    }

    T total() const { return total_; }

private:
    std::mutex lock_;
    T total_{};
};

}  // namespace shop

int main(int argc, char** argv) {
    const long iterations = argc > 1 ? std::atol(argv[1]) : 100000;
    shop::Ledger<long> ledger;
    std::vector<std::thread> clerks;
    for (int t = 0; t < 4; t++)
        clerks.emplace_back([&ledger, iterations, t] {
            for (long i = 0; i < iterations; i++) ledger.post(i + t);
        });
    for (auto& clerk : clerks) clerk.join();
    return ledger.total() == 42 ? 1 : 0;
}
