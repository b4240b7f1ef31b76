// A value of which each process has its own, made with no lock held: a
// function-local static's guard or a mutex held while it is made would be
// inherited as held by a child forked meanwhile, which would then wait on
// it for ever. A forked child makes its own on its first use (the parent's
// copy in its memory is left as it is).
#pragma once

#include <unistd.h>

#include <atomic>

namespace tgemm {

template <typename T>
class PerProcess {
public:
    // This process's value: on the first use in the process, a new T given
    // to make(T &); threads that race each make one, the first published is
    // kept and the others are given to drop(T &), then deleted.
    template <typename Make, typename Drop>
    T &get(Make make, Drop drop)
    {
        const pid_t pid = getpid();
        Entry *seen = current_.load(std::memory_order_acquire);
        if (seen != nullptr && seen->pid == pid)
            return seen->value;
        auto *mine = new Entry(pid);  // never destroyed: calls may run during exit
        make(mine->value);
        if (!current_.compare_exchange_strong(seen, mine, std::memory_order_acq_rel, std::memory_order_acquire)) {
            drop(mine->value);
            delete mine;
            return seen->value;
        }
        return mine->value;
    }

private:
    struct Entry {
        explicit Entry(pid_t p) : pid(p) {}
        const pid_t pid;
        T value;
    };
    std::atomic<Entry *> current_{nullptr};
};

}  // namespace tgemm
