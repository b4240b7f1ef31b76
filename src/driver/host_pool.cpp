// The host-operand path's pipelines, their leases and their release
// (host_pool.hpp).
#include "driver/host_pool.hpp"

#include <condition_variable>
#include <mutex>
#include <new>

#include "core/status.hpp"
#include "runtime/device.hpp"
#include "runtime/workspace.hpp"
#include "driver/host_pipeline.hpp"

namespace tgemm {

std::vector<cudaEvent_t *> Pipeline::events()
{
    std::vector<cudaEvent_t *> v = {&start, &ready, &loaded, &computed, &joined, &in_done, &out_done, &peer_done, &end};
    for (int i = 0; i < 2; ++i) {
        v.push_back(&free_a[i]);
        v.push_back(&free_b[i]);
    }
    for (cudaEvent_t &e : free_c)
        v.push_back(&e);
    for (cudaEvent_t &e : stored_c)
        v.push_back(&e);
    for (cudaEvent_t &e : panel_ready)
        v.push_back(&e);
    for (Staging &b : staging)
        v.push_back(&b.done);
    for (cudaEvent_t &e : timing)
        v.push_back(&e);
    return v;
}

cudaError_t grow_events(std::vector<cudaEvent_t> &events, size_t count, unsigned flags)
{
    while (events.size() < count) {
        cudaEvent_t e = nullptr;
        const cudaError_t err = cudaEventCreateWithFlags(&e, flags);
        if (err != cudaSuccess)
            return err;
        events.push_back(e);
    }
    return cudaSuccess;
}

namespace {

// Frees everything the pipeline holds; the first error, if any.
cudaError_t destroy_pipeline(Pipeline *pl)
{
    cudaError_t first = cudaSuccess;
    const auto note = [&first](cudaError_t e) {
        if (first == cudaSuccess)
            first = e;
    };
    for (cudaStream_t s : {pl->in, pl->comp, pl->comp2, pl->out, pl->peer})
        if (s != nullptr)
            note(cudaStreamDestroy(s));
    for (cudaEvent_t *ev : pl->events())
        if (*ev != nullptr)
            note(cudaEventDestroy(*ev));
    for (Staging &b : pl->staging)
        if (b.ptr != nullptr)
            note(cudaFreeHost(b.ptr));
    delete pl;
    return first;
}

tgemm_status create_pipeline(int dev, Pipeline **out)
{
    Pipeline *pl = new (std::nothrow) Pipeline();
    if (pl == nullptr)
        return fail(TGEMM_ERROR_OUT_OF_MEMORY, "no host memory for a host-operand pipeline");
    int pitch = 0;
    cudaError_t e = cudaDeviceGetAttribute(&pitch, cudaDevAttrMaxPitch, dev);
    pl->max_pitch = pitch;
    for (cudaStream_t *s : {&pl->in, &pl->comp, &pl->comp2, &pl->out, &pl->peer})
        if (e == cudaSuccess)
            e = cudaStreamCreateWithFlags(s, cudaStreamNonBlocking);
    pl->free_c.assign(2, nullptr);
    for (cudaEvent_t *ev : pl->events())
        if (e == cudaSuccess)
            e = cudaEventCreateWithFlags(ev, cudaEventDisableTiming);
    if (e != cudaSuccess) {
        const tgemm_status st = fail_cuda(e, "creating the streams and events of a host-operand pipeline");
        (void)destroy_pipeline(pl);
        return st;
    }
    *out = pl;
    return TGEMM_SUCCESS;
}

struct DeviceState {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<Pipeline *> idle;
    int count = 0;  // pipelines in existence, leased or idle
    // Pipelines given up after a failure (Lease::discard): never used
    // again, freed once their streams are found idle.
    std::vector<Pipeline *> broken;
    cudaMemPool_t pool = nullptr;  // tile buffers
};

DeviceState &device_state(int dev)
{
    // Never destroyed, like the pipelines (see host_pool.hpp).
    static DeviceState *states = new DeviceState[kMaxDevices];
    return states[dev];
}

}  // namespace

Lease::~Lease()
{
    if (pl_ == nullptr)
        return;
    DeviceState &st = device_state(dev_);
    {
        std::lock_guard<std::mutex> lk(st.mu);
        st.idle.push_back(pl_);
    }
    st.cv.notify_one();
}

namespace {

// The device's tile pool, made on first use; with st.mu held.
tgemm_status tile_pool(DeviceState &st, int dev)
{
    return st.pool != nullptr ? TGEMM_SUCCESS : create_workspace_pool(dev, &st.pool, kTileKeepBytes);
}

}  // namespace

tgemm_status open_tile_pool(int dev, int reader)
{
    DeviceState &st = device_state(dev);
    std::lock_guard<std::mutex> lk(st.mu);
    const tgemm_status s = tile_pool(st, dev);
    if (s != TGEMM_SUCCESS)
        return s;
    cudaMemAccessDesc desc = {};
    desc.location.type = cudaMemLocationTypeDevice;
    desc.location.id = reader;
    desc.flags = cudaMemAccessFlagsProtReadWrite;
    return check_cuda(cudaMemPoolSetAccess(st.pool, &desc, 1), "cudaMemPoolSetAccess");
}

tgemm_status Lease::acquire(int dev)
{
    DeviceState &st = device_state(dev);
    std::unique_lock<std::mutex> lk(st.mu);
    const tgemm_status s = tile_pool(st, dev);
    if (s != TGEMM_SUCCESS)
        return s;
    pool_ = st.pool;
    st.cv.wait(lk, [&] { return !st.idle.empty() || st.count < kPipelinesPerDevice; });
    if (!st.idle.empty()) {
        pl_ = st.idle.back();
        st.idle.pop_back();
        dev_ = dev;
        return TGEMM_SUCCESS;
    }
    ++st.count;
    lk.unlock();
    Pipeline *pl = nullptr;
    const tgemm_status made = create_pipeline(dev, &pl);
    if (made != TGEMM_SUCCESS) {
        lk.lock();
        --st.count;
        lk.unlock();
        st.cv.notify_one();
        return made;
    }
    pl_ = pl;
    dev_ = dev;
    return TGEMM_SUCCESS;
}

void Lease::discard()
{
    DeviceState &st = device_state(dev_);
    {
        std::lock_guard<std::mutex> lk(st.mu);
        st.broken.push_back(pl_);
        --st.count;
    }
    st.cv.notify_one();
    pl_ = nullptr;
}

tgemm_status release_host_resources()
{
    tgemm_status result = TGEMM_SUCCESS;
    for (int dev = 0; dev < kMaxDevices; ++dev) {
        DeviceState &st = device_state(dev);
        std::lock_guard<std::mutex> lk(st.mu);
        if (st.idle.empty() && st.broken.empty() && st.pool == nullptr)
            continue;
        DeviceGuard guard;
        tgemm_status s = guard.enter(dev);
        if (s != TGEMM_SUCCESS) {
            if (result == TGEMM_SUCCESS)
                result = s;
            continue;
        }
        for (Pipeline *pl : st.idle) {
            const cudaError_t e = destroy_pipeline(pl);
            if (e != cudaSuccess && s == TGEMM_SUCCESS)
                s = fail_cuda(e, "freeing a host-operand pipeline");
            --st.count;
        }
        st.idle.clear();
        // A pipeline given up is freed once its streams are found idle.
        for (auto it = st.broken.begin(); it != st.broken.end();) {
            cudaError_t e = cudaSuccess;
            for (cudaStream_t q : {(*it)->in, (*it)->comp, (*it)->comp2, (*it)->out, (*it)->peer})
                if (e == cudaSuccess)
                    e = cudaStreamSynchronize(q);
            const bool idle = e == cudaSuccess;
            if (idle)
                e = destroy_pipeline(*it);
            if (e != cudaSuccess && s == TGEMM_SUCCESS)
                s = fail_cuda(e, "freeing a host-operand pipeline given up after a failure");
            it = idle ? st.broken.erase(it) : it + 1;
        }
        if (st.pool != nullptr && s == TGEMM_SUCCESS)
            s = check_cuda(cudaMemPoolTrimTo(st.pool, 0), "cudaMemPoolTrimTo");
        st.cv.notify_all();
        if (result == TGEMM_SUCCESS)
            result = s;
    }
    return result;
}

}  // namespace tgemm
