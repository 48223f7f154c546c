/*
 * Our declarations of the subset of webgpu.h that wgtensor calls, with the values and
 * struct layouts of the Dawn build the project ships (npm bun-webgpu-linux-x64 0.1.7, Dawn
 * of 2025/2026). No third-party header is copied: where this build differs from the newest
 * standard header (feature numbers, for one), the value here is the one the binary answers
 * to, and tests/test_webgpu.c checks the values we depend on against the real library.
 *
 * Structs the library fills are wrapped with room to spare, in case a newer build appends
 * fields.
 */
#ifndef WGT_WEBGPU_API_H
#define WGT_WEBGPU_API_H

#include <stddef.h>
#include <stdint.h>

typedef struct WGPUInstanceImpl *WGPUInstance;
typedef struct WGPUAdapterImpl *WGPUAdapter;
typedef struct WGPUDeviceImpl *WGPUDevice;
typedef struct WGPUQueueImpl *WGPUQueue;
typedef struct WGPUBufferImpl *WGPUBuffer;
typedef struct WGPUShaderModuleImpl *WGPUShaderModule;
typedef struct WGPUBindGroupLayoutImpl *WGPUBindGroupLayout;
typedef struct WGPUBindGroupImpl *WGPUBindGroup;
typedef struct WGPUPipelineLayoutImpl *WGPUPipelineLayout;
typedef struct WGPUComputePipelineImpl *WGPUComputePipeline;
typedef struct WGPUCommandEncoderImpl *WGPUCommandEncoder;
typedef struct WGPUComputePassEncoderImpl *WGPUComputePassEncoder;
typedef struct WGPUCommandBufferImpl *WGPUCommandBuffer;
typedef struct WGPUQuerySetImpl *WGPUQuerySet;

typedef uint32_t WGPUBool;
typedef uint64_t WGPUFlags;

#define WGPU_STRLEN SIZE_MAX
#define WGPU_WHOLE_SIZE UINT64_MAX

typedef struct WGPUStringView {
    const char *data;
    size_t length;
} WGPUStringView;

typedef struct WGPUChainedStruct {
    struct WGPUChainedStruct *next;
    uint32_t sType;
} WGPUChainedStruct;

/* ---- enums (uint32_t in the ABI) ---- */
enum {
    WGPU_STYPE_SHADER_SOURCE_WGSL = 0x00000002,
    WGPU_STYPE_DAWN_TOGGLES_DESCRIPTOR = 0x0005000A,
    WGPU_STYPE_ADAPTER_PROPERTIES_MEMORY_HEAPS = 0x00050013,
};
enum { WGPU_CALLBACK_MODE_WAIT_ANY_ONLY = 1, WGPU_CALLBACK_MODE_ALLOW_PROCESS_EVENTS = 2, WGPU_CALLBACK_MODE_ALLOW_SPONTANEOUS = 3 };
enum { WGPU_STATUS_SUCCESS = 1, WGPU_STATUS_ERROR = 2 };
enum { WGPU_WAIT_STATUS_SUCCESS = 1, WGPU_WAIT_STATUS_TIMED_OUT = 2 };
enum { WGPU_REQUEST_STATUS_SUCCESS = 1 }; /* adapter, device, map, pop-error-scope statuses */
enum { WGPU_POWER_PREFERENCE_UNDEFINED = 0, WGPU_POWER_PREFERENCE_LOW_POWER = 1, WGPU_POWER_PREFERENCE_HIGH_PERFORMANCE = 2 };
enum { WGPU_FEATURE_LEVEL_CORE = 2 };
enum {
    WGPU_BACKEND_UNDEFINED = 0, WGPU_BACKEND_NULL = 1, WGPU_BACKEND_WEBGPU = 2, WGPU_BACKEND_D3D11 = 3,
    WGPU_BACKEND_D3D12 = 4, WGPU_BACKEND_METAL = 5, WGPU_BACKEND_VULKAN = 6, WGPU_BACKEND_OPENGL = 7,
    WGPU_BACKEND_OPENGLES = 8
};
enum { WGPU_ADAPTER_DISCRETE_GPU = 1, WGPU_ADAPTER_INTEGRATED_GPU = 2, WGPU_ADAPTER_CPU = 3, WGPU_ADAPTER_UNKNOWN = 4 };
enum { WGPU_DEVICE_LOST_UNKNOWN = 1, WGPU_DEVICE_LOST_DESTROYED = 2, WGPU_DEVICE_LOST_CALLBACK_CANCELLED = 3,
       WGPU_DEVICE_LOST_FAILED_CREATION = 4 };
enum { WGPU_ERROR_NONE = 1, WGPU_ERROR_VALIDATION = 2, WGPU_ERROR_OUT_OF_MEMORY = 3, WGPU_ERROR_INTERNAL = 4,
       WGPU_ERROR_UNKNOWN = 5 };
enum { WGPU_ERROR_FILTER_VALIDATION = 1, WGPU_ERROR_FILTER_OUT_OF_MEMORY = 2, WGPU_ERROR_FILTER_INTERNAL = 3 };
enum { WGPU_BUFFER_BINDING_UNIFORM = 2, WGPU_BUFFER_BINDING_STORAGE = 3, WGPU_BUFFER_BINDING_READ_ONLY_STORAGE = 4 };
enum { WGPU_QUERY_TYPE_TIMESTAMP = 2 };
#define WGPU_QUERY_SET_INDEX_UNDEFINED 0xFFFFFFFFu
/* Feature numbers of this Dawn build (the 2026 standard header numbers shader-f16 0x0B and
 * subgroups 0x12; this binary answers to 0x0A and 0x11). */
enum {
    WGPU_FEATURE_TIMESTAMP_QUERY = 0x00000003,
    WGPU_FEATURE_SHADER_F16 = 0x0000000A,
    WGPU_FEATURE_SUBGROUPS = 0x00000011,
    WGPU_FEATURE_SUBGROUP_MATRIX = 0x00050037,
    /* One below the standard header's number in this build, as subgroup-matrix is. */
    WGPU_FEATURE_ADAPTER_PROPERTIES_MEMORY_HEAPS = 0x00050015,
};

/* Flags (uint64_t). */
#define WGPU_BUFFER_USAGE_MAP_READ ((WGPUFlags)0x1)
#define WGPU_BUFFER_USAGE_MAP_WRITE ((WGPUFlags)0x2)
#define WGPU_BUFFER_USAGE_COPY_SRC ((WGPUFlags)0x4)
#define WGPU_BUFFER_USAGE_COPY_DST ((WGPUFlags)0x8)
#define WGPU_BUFFER_USAGE_UNIFORM ((WGPUFlags)0x40)
#define WGPU_BUFFER_USAGE_STORAGE ((WGPUFlags)0x80)
#define WGPU_BUFFER_USAGE_QUERY_RESOLVE ((WGPUFlags)0x200)
#define WGPU_MAP_MODE_READ ((WGPUFlags)0x1)
#define WGPU_MAP_MODE_WRITE ((WGPUFlags)0x2)
#define WGPU_SHADER_STAGE_COMPUTE ((WGPUFlags)0x4)

typedef struct WGPUFuture { uint64_t id; } WGPUFuture;
typedef struct WGPUFutureWaitInfo {
    WGPUFuture future;
    WGPUBool completed;
} WGPUFutureWaitInfo;

/* ---- callbacks: all take two userdata pointers ---- */
typedef void (*WGPURequestAdapterCallback)(uint32_t status, WGPUAdapter adapter, WGPUStringView message, void *u1, void *u2);
typedef void (*WGPURequestDeviceCallback)(uint32_t status, WGPUDevice device, WGPUStringView message, void *u1, void *u2);
typedef void (*WGPUDeviceLostCallback)(const WGPUDevice *device, uint32_t reason, WGPUStringView message, void *u1, void *u2);
typedef void (*WGPUUncapturedErrorCallback)(const WGPUDevice *device, uint32_t type, WGPUStringView message, void *u1, void *u2);
typedef void (*WGPUBufferMapCallback)(uint32_t status, WGPUStringView message, void *u1, void *u2);
typedef void (*WGPUPopErrorScopeCallback)(uint32_t status, uint32_t type, WGPUStringView message, void *u1, void *u2);
typedef void (*WGPUQueueWorkDoneCallback)(uint32_t status, void *u1, void *u2);

/* Every *CallbackInfo has this shape; only the callback's type differs. */
typedef struct WGPUCallbackInfo {
    WGPUChainedStruct *nextInChain;
    uint32_t mode;
    void (*callback)(void);
    void *userdata1;
    void *userdata2;
} WGPUCallbackInfo;

typedef struct WGPUUncapturedErrorCallbackInfo {
    WGPUChainedStruct *nextInChain;
    WGPUUncapturedErrorCallback callback;
    void *userdata1;
    void *userdata2;
} WGPUUncapturedErrorCallbackInfo;

/* ---- instance and adapter ---- */
typedef struct WGPUInstanceCapabilities {
    WGPUChainedStruct *nextInChain;
    WGPUBool timedWaitAnyEnable;
    size_t timedWaitAnyMaxCount;
} WGPUInstanceCapabilities;

typedef struct WGPUInstanceDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUInstanceCapabilities capabilities;
} WGPUInstanceDescriptor;

typedef struct WGPUDawnTogglesDescriptor {
    WGPUChainedStruct chain;
    size_t enabledToggleCount;
    const char *const *enabledToggles;
    size_t disabledToggleCount;
    const char *const *disabledToggles;
} WGPUDawnTogglesDescriptor;

typedef struct WGPURequestAdapterOptions {
    WGPUChainedStruct *nextInChain;
    uint32_t featureLevel;
    uint32_t powerPreference;
    WGPUBool forceFallbackAdapter;
    uint32_t backendType;
    void *compatibleSurface;
} WGPURequestAdapterOptions;

typedef struct WGPUAdapterInfo {
    WGPUChainedStruct *nextInChain;
    WGPUStringView vendor;
    WGPUStringView architecture;
    WGPUStringView device;
    WGPUStringView description;
    uint32_t backendType;
    uint32_t adapterType;
    uint32_t vendorID;
    uint32_t deviceID;
    uint32_t subgroupMinSize;
    uint32_t subgroupMaxSize;
} WGPUAdapterInfo;
typedef union WGPUAdapterInfoRoom { WGPUAdapterInfo info; char room[512]; } WGPUAdapterInfoRoom;

/* Chained to WGPUAdapterInfo (feature adapter-properties-memory-heaps): the adapter's memory
 * heaps, allocated by the library and freed with wgpuAdapterPropertiesMemoryHeapsFreeMembers. */
enum { WGPU_HEAP_PROPERTY_DEVICE_LOCAL = 0x1 };
typedef struct WGPUMemoryHeapInfo {
    uint64_t properties; /* WGPU_HEAP_PROPERTY_* bits */
    uint64_t size;
} WGPUMemoryHeapInfo;
typedef struct WGPUAdapterPropertiesMemoryHeaps {
    WGPUChainedStruct chain;
    size_t heapCount;
    const WGPUMemoryHeapInfo *heapInfo;
} WGPUAdapterPropertiesMemoryHeaps;

typedef struct WGPULimits {
    WGPUChainedStruct *nextInChain;
    uint32_t maxTextureDimension1D;
    uint32_t maxTextureDimension2D;
    uint32_t maxTextureDimension3D;
    uint32_t maxTextureArrayLayers;
    uint32_t maxBindGroups;
    uint32_t maxBindGroupsPlusVertexBuffers;
    uint32_t maxBindingsPerBindGroup;
    uint32_t maxDynamicUniformBuffersPerPipelineLayout;
    uint32_t maxDynamicStorageBuffersPerPipelineLayout;
    uint32_t maxSampledTexturesPerShaderStage;
    uint32_t maxSamplersPerShaderStage;
    uint32_t maxStorageBuffersPerShaderStage;
    uint32_t maxStorageTexturesPerShaderStage;
    uint32_t maxUniformBuffersPerShaderStage;
    uint64_t maxUniformBufferBindingSize;
    uint64_t maxStorageBufferBindingSize;
    uint32_t minUniformBufferOffsetAlignment;
    uint32_t minStorageBufferOffsetAlignment;
    uint32_t maxVertexBuffers;
    uint64_t maxBufferSize;
    uint32_t maxVertexAttributes;
    uint32_t maxVertexBufferArrayStride;
    uint32_t maxInterStageShaderVariables;
    uint32_t maxColorAttachments;
    uint32_t maxColorAttachmentBytesPerSample;
    uint32_t maxComputeWorkgroupStorageSize;
    uint32_t maxComputeInvocationsPerWorkgroup;
    uint32_t maxComputeWorkgroupSizeX;
    uint32_t maxComputeWorkgroupSizeY;
    uint32_t maxComputeWorkgroupSizeZ;
    uint32_t maxComputeWorkgroupsPerDimension;
    uint32_t maxImmediateSize;
    uint32_t maxStorageBuffersInVertexStage;
    uint32_t maxStorageTexturesInVertexStage;
    uint32_t maxStorageBuffersInFragmentStage;
    uint32_t maxStorageTexturesInFragmentStage;
} WGPULimits;
typedef union WGPULimitsRoom { WGPULimits limits; char room[1024]; } WGPULimitsRoom;

typedef struct WGPUSupportedFeatures {
    size_t featureCount;
    const uint32_t *features;
} WGPUSupportedFeatures;

typedef struct WGPUQueueDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
} WGPUQueueDescriptor;

typedef struct WGPUDeviceDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
    size_t requiredFeatureCount;
    const uint32_t *requiredFeatures;
    const WGPULimits *requiredLimits;
    WGPUQueueDescriptor defaultQueue;
    WGPUCallbackInfo deviceLostCallbackInfo;
    WGPUUncapturedErrorCallbackInfo uncapturedErrorCallbackInfo;
} WGPUDeviceDescriptor;

/* ---- resources ---- */
typedef struct WGPUBufferDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
    WGPUFlags usage;
    uint64_t size;
    WGPUBool mappedAtCreation;
} WGPUBufferDescriptor;

typedef struct WGPUShaderSourceWGSL {
    WGPUChainedStruct chain;
    WGPUStringView code;
} WGPUShaderSourceWGSL;

typedef struct WGPUShaderModuleDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
} WGPUShaderModuleDescriptor;

typedef struct WGPUBufferBindingLayout {
    WGPUChainedStruct *nextInChain;
    uint32_t type;
    WGPUBool hasDynamicOffset;
    uint64_t minBindingSize;
} WGPUBufferBindingLayout;

typedef struct WGPUSamplerBindingLayout { WGPUChainedStruct *nextInChain; uint32_t type; } WGPUSamplerBindingLayout;
typedef struct WGPUTextureBindingLayout {
    WGPUChainedStruct *nextInChain;
    uint32_t sampleType, viewDimension;
    WGPUBool multisampled;
} WGPUTextureBindingLayout;
typedef struct WGPUStorageTextureBindingLayout {
    WGPUChainedStruct *nextInChain;
    uint32_t access, format, viewDimension;
} WGPUStorageTextureBindingLayout;

typedef struct WGPUBindGroupLayoutEntry {
    WGPUChainedStruct *nextInChain;
    uint32_t binding;
    WGPUFlags visibility;
    uint32_t bindingArraySize;
    WGPUBufferBindingLayout buffer;
    WGPUSamplerBindingLayout sampler;
    WGPUTextureBindingLayout texture;
    WGPUStorageTextureBindingLayout storageTexture;
} WGPUBindGroupLayoutEntry;

typedef struct WGPUBindGroupLayoutDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
    size_t entryCount;
    const WGPUBindGroupLayoutEntry *entries;
} WGPUBindGroupLayoutDescriptor;

typedef struct WGPUBindGroupEntry {
    WGPUChainedStruct *nextInChain;
    uint32_t binding;
    WGPUBuffer buffer;
    uint64_t offset;
    uint64_t size;
    void *sampler;
    void *textureView;
} WGPUBindGroupEntry;

typedef struct WGPUBindGroupDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
    WGPUBindGroupLayout layout;
    size_t entryCount;
    const WGPUBindGroupEntry *entries;
} WGPUBindGroupDescriptor;

typedef struct WGPUPipelineLayoutDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
    size_t bindGroupLayoutCount;
    const WGPUBindGroupLayout *bindGroupLayouts;
    uint32_t immediateSize;
} WGPUPipelineLayoutDescriptor;

typedef struct WGPUConstantEntry {
    WGPUChainedStruct *nextInChain;
    WGPUStringView key;
    double value;
} WGPUConstantEntry;

typedef struct WGPUComputeState {
    WGPUChainedStruct *nextInChain;
    WGPUShaderModule module;
    WGPUStringView entryPoint;
    size_t constantCount;
    const WGPUConstantEntry *constants;
} WGPUComputeState;

typedef struct WGPUComputePipelineDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
    WGPUPipelineLayout layout;
    WGPUComputeState compute;
} WGPUComputePipelineDescriptor;

typedef struct WGPUCommandEncoderDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
} WGPUCommandEncoderDescriptor;

/* Timestamp queries (feature timestamp-query): a pass writes its begin and end times, in
 * nanoseconds once resolved, into two queries of a set. */
typedef struct WGPUQuerySetDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
    uint32_t type;
    uint32_t count;
} WGPUQuerySetDescriptor;

typedef struct WGPUPassTimestampWrites {
    WGPUChainedStruct *nextInChain;
    WGPUQuerySet querySet;
    uint32_t beginningOfPassWriteIndex;
    uint32_t endOfPassWriteIndex;
} WGPUPassTimestampWrites;

typedef struct WGPUComputePassDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
    const WGPUPassTimestampWrites *timestampWrites;
} WGPUComputePassDescriptor;

typedef struct WGPUCommandBufferDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
} WGPUCommandBufferDescriptor;

/* ---- the function table, filled by the loader ---- */
#define WGT_WGPU_FUNCTIONS(X)                                                                                    \
    X(WGPUInstance, wgpuCreateInstance, (const WGPUInstanceDescriptor *))                                       \
    X(void, wgpuInstanceRelease, (WGPUInstance))                                                                 \
    X(WGPUFuture, wgpuInstanceRequestAdapter, (WGPUInstance, const WGPURequestAdapterOptions *, WGPUCallbackInfo)) \
    X(uint32_t, wgpuInstanceWaitAny, (WGPUInstance, size_t, WGPUFutureWaitInfo *, uint64_t))                     \
    X(void, wgpuInstanceProcessEvents, (WGPUInstance))                                                           \
    X(uint32_t, wgpuAdapterGetInfo, (WGPUAdapter, WGPUAdapterInfo *))                                            \
    X(void, wgpuAdapterInfoFreeMembers, (WGPUAdapterInfo))                                                       \
    X(void, wgpuAdapterPropertiesMemoryHeapsFreeMembers, (WGPUAdapterPropertiesMemoryHeaps))                     \
    X(uint32_t, wgpuAdapterGetLimits, (WGPUAdapter, WGPULimits *))                                               \
    X(void, wgpuAdapterGetFeatures, (WGPUAdapter, WGPUSupportedFeatures *))                                      \
    X(WGPUBool, wgpuAdapterHasFeature, (WGPUAdapter, uint32_t))                                                  \
    X(void, wgpuSupportedFeaturesFreeMembers, (WGPUSupportedFeatures))                                           \
    X(WGPUFuture, wgpuAdapterRequestDevice, (WGPUAdapter, const WGPUDeviceDescriptor *, WGPUCallbackInfo))       \
    X(void, wgpuAdapterRelease, (WGPUAdapter))                                                                   \
    X(uint32_t, wgpuDeviceGetLimits, (WGPUDevice, WGPULimits *))                                                 \
    X(WGPUBool, wgpuDeviceHasFeature, (WGPUDevice, uint32_t))                                                    \
    X(WGPUQueue, wgpuDeviceGetQueue, (WGPUDevice))                                                               \
    X(WGPUBuffer, wgpuDeviceCreateBuffer, (WGPUDevice, const WGPUBufferDescriptor *))                            \
    X(WGPUShaderModule, wgpuDeviceCreateShaderModule, (WGPUDevice, const WGPUShaderModuleDescriptor *))          \
    X(WGPUBindGroupLayout, wgpuDeviceCreateBindGroupLayout, (WGPUDevice, const WGPUBindGroupLayoutDescriptor *)) \
    X(WGPUBindGroup, wgpuDeviceCreateBindGroup, (WGPUDevice, const WGPUBindGroupDescriptor *))                   \
    X(WGPUPipelineLayout, wgpuDeviceCreatePipelineLayout, (WGPUDevice, const WGPUPipelineLayoutDescriptor *))    \
    X(WGPUComputePipeline, wgpuDeviceCreateComputePipeline, (WGPUDevice, const WGPUComputePipelineDescriptor *)) \
    X(WGPUCommandEncoder, wgpuDeviceCreateCommandEncoder, (WGPUDevice, const WGPUCommandEncoderDescriptor *))    \
    X(WGPUQuerySet, wgpuDeviceCreateQuerySet, (WGPUDevice, const WGPUQuerySetDescriptor *))                      \
    X(void, wgpuQuerySetDestroy, (WGPUQuerySet))                                                                 \
    X(void, wgpuQuerySetRelease, (WGPUQuerySet))                                                                 \
    X(void, wgpuDevicePushErrorScope, (WGPUDevice, uint32_t))                                                    \
    X(WGPUFuture, wgpuDevicePopErrorScope, (WGPUDevice, WGPUCallbackInfo))                                       \
    X(void, wgpuDeviceForceLoss, (WGPUDevice, uint32_t, WGPUStringView))                                         \
    X(void, wgpuDeviceDestroy, (WGPUDevice))                                                                     \
    X(void, wgpuDeviceRelease, (WGPUDevice))                                                                     \
    X(void, wgpuQueueSubmit, (WGPUQueue, size_t, const WGPUCommandBuffer *))                                     \
    X(void, wgpuQueueWriteBuffer, (WGPUQueue, WGPUBuffer, uint64_t, const void *, size_t))                       \
    X(WGPUFuture, wgpuQueueOnSubmittedWorkDone, (WGPUQueue, WGPUCallbackInfo))                                   \
    X(void, wgpuQueueRelease, (WGPUQueue))                                                                       \
    X(WGPUFuture, wgpuBufferMapAsync, (WGPUBuffer, WGPUFlags, size_t, size_t, WGPUCallbackInfo))                 \
    X(const void *, wgpuBufferGetConstMappedRange, (WGPUBuffer, size_t, size_t))                                 \
    X(void *, wgpuBufferGetMappedRange, (WGPUBuffer, size_t, size_t))                                            \
    X(void, wgpuBufferUnmap, (WGPUBuffer))                                                                       \
    X(void, wgpuBufferDestroy, (WGPUBuffer))                                                                     \
    X(void, wgpuBufferRelease, (WGPUBuffer))                                                                     \
    X(void, wgpuBufferAddRef, (WGPUBuffer))                                                                      \
    X(uint64_t, wgpuBufferGetSize, (WGPUBuffer))                                                                 \
    X(WGPUFlags, wgpuBufferGetUsage, (WGPUBuffer))                                                               \
    X(void, wgpuShaderModuleRelease, (WGPUShaderModule))                                                         \
    X(void, wgpuBindGroupLayoutRelease, (WGPUBindGroupLayout))                                                   \
    X(void, wgpuBindGroupRelease, (WGPUBindGroup))                                                               \
    X(void, wgpuPipelineLayoutRelease, (WGPUPipelineLayout))                                                     \
    X(void, wgpuComputePipelineRelease, (WGPUComputePipeline))                                                   \
    X(WGPUComputePassEncoder, wgpuCommandEncoderBeginComputePass, (WGPUCommandEncoder, const WGPUComputePassDescriptor *)) \
    X(void, wgpuCommandEncoderCopyBufferToBuffer, (WGPUCommandEncoder, WGPUBuffer, uint64_t, WGPUBuffer, uint64_t, uint64_t)) \
    X(void, wgpuCommandEncoderClearBuffer, (WGPUCommandEncoder, WGPUBuffer, uint64_t, uint64_t))                 \
    X(void, wgpuCommandEncoderResolveQuerySet, (WGPUCommandEncoder, WGPUQuerySet, uint32_t, uint32_t, WGPUBuffer, uint64_t)) \
    X(WGPUCommandBuffer, wgpuCommandEncoderFinish, (WGPUCommandEncoder, const WGPUCommandBufferDescriptor *))    \
    X(void, wgpuCommandEncoderRelease, (WGPUCommandEncoder))                                                     \
    X(void, wgpuComputePassEncoderSetPipeline, (WGPUComputePassEncoder, WGPUComputePipeline))                    \
    X(void, wgpuComputePassEncoderSetBindGroup, (WGPUComputePassEncoder, uint32_t, WGPUBindGroup, size_t, const uint32_t *)) \
    X(void, wgpuComputePassEncoderDispatchWorkgroups, (WGPUComputePassEncoder, uint32_t, uint32_t, uint32_t))    \
    X(void, wgpuComputePassEncoderEnd, (WGPUComputePassEncoder))                                                 \
    X(void, wgpuComputePassEncoderRelease, (WGPUComputePassEncoder))                                             \
    X(void, wgpuCommandBufferRelease, (WGPUCommandBuffer))

typedef struct wgpu_procs {
#define WGT_DECLARE_PROC(ret, name, args) ret(*name) args;
    WGT_WGPU_FUNCTIONS(WGT_DECLARE_PROC)
#undef WGT_DECLARE_PROC
} wgpu_procs;

static inline WGPUStringView wgpu_str(const char *s) {
    WGPUStringView v = {s, WGPU_STRLEN};
    return v;
}

#endif
