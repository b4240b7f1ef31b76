// State of which each process has its own, a forked child's too, found
// without a system call: fork_generation() tells a process from the one it
// was forked from, and PerProcess<T> keeps one T per process, made with no
// lock held (a function-local static's guard or a mutex held while it is
// made would be inherited as held by a child forked meanwhile, which would
// then wait on it for ever).
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>

namespace tgemm {

namespace detail {
inline std::atomic<uint64_t> g_fork_generation{0};
inline void next_fork_generation()
{
    g_fork_generation.fetch_add(1, std::memory_order_relaxed);
}
// Registered when the library is loaded; runs in each forked child.
inline const int g_fork_generation_hook = pthread_atfork(nullptr, nullptr, next_fork_generation);
}  // namespace detail

// 0 in the process that loaded tgemm, one more in each child forked from a
// process that has it: equal within a process, different across a fork.
inline uint64_t fork_generation()
{
    return detail::g_fork_generation.load(std::memory_order_relaxed);
}

template <typename T>
class PerProcess {
public:
    // This process's value: on the first use in the process, a new T given
    // to make(T &); threads that race each make one, the first published is
    // kept and the others are given to drop(T &), then deleted. A forked
    // child makes its own (the parent's copy in its memory is left as it is).
    template <typename Make, typename Drop>
    T &get(Make make, Drop drop)
    {
        const uint64_t generation = fork_generation();
        Entry *seen = current_.load(std::memory_order_acquire);
        if (seen != nullptr && seen->generation == generation)
            return seen->value;
        auto *mine = new Entry(generation);  // never destroyed: calls may run during exit
        make(mine->value);
        if (!current_.compare_exchange_strong(seen, mine, std::memory_order_acq_rel, std::memory_order_acquire)) {
            drop(mine->value);
            delete mine;
            return seen->value;
        }
        return mine->value;
    }
    // The same for a T that needs nothing beyond its constructor.
    T &get()
    {
        return get([](T &) {}, [](T &) {});
    }

private:
    struct Entry {
        explicit Entry(uint64_t g) : generation(g) {}
        const uint64_t generation;
        T value;
    };
    std::atomic<Entry *> current_{nullptr};
};

}  // namespace tgemm
