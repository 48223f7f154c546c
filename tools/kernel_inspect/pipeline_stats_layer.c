/*
 * A Vulkan layer for looking at the kernels the driver compiled from wgtensor's WGSL (through
 * Dawn's SPIR-V). It is a development tool, not part of the library: WebGPU says nothing
 * about registers or machine code, and the speed of a GEMM tile is decided there (on an H200
 * the tiled kernel sits exactly at 128 registers, the most that lets two workgroups of 256
 * invocations share a multiprocessor, so one more live value costs spills).
 *
 * Loaded with VK_LAYER_PATH=<dir of the manifest> VK_INSTANCE_LAYERS=VK_LAYER_WGTENSOR_pipeline_stats
 * (see README.md beside this file), it
 * - enables VK_KHR_pipeline_executable_properties where the device offers it, asks for the
 *   statistics of every compute pipeline and prints them to stderr (NVIDIA: register count,
 *   binary size, shared memory size);
 * - with WGT_INSPECT_DIR set, writes each shader module's SPIR-V there (N.spv, numbered in
 *   creation order) and, per pipeline, the data of a pipeline cache holding only that
 *   pipeline (cache_pP_mN.bin), which on NVIDIA carries the machine code (nvidia_code.py).
 *
 * Only what wgtensor's runs need is intercepted; everything else goes straight down the chain.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#define EXPORT __attribute__((visibility("default")))

/* The next layer's (or the driver's) entry points. One instance and one device at a time:
 * all a wgtensor process creates. */
static PFN_vkGetInstanceProcAddr next_instance_proc;
static PFN_vkGetDeviceProcAddr next_device_proc;
static VkInstance instance;
static struct {
    PFN_vkCreateComputePipelines create_compute_pipelines;
    PFN_vkCreateShaderModule create_shader_module;
    PFN_vkGetPipelineExecutablePropertiesKHR executable_properties;
    PFN_vkGetPipelineExecutableStatisticsKHR executable_statistics;
    PFN_vkCreatePipelineCache create_pipeline_cache;
    PFN_vkGetPipelineCacheData pipeline_cache_data;
    PFN_vkDestroyPipelineCache destroy_pipeline_cache;
    PFN_vkDestroyPipeline destroy_pipeline;
    int statistics; /* the extension is enabled */
} dev;

#define MAX_MODULES 4096
static VkShaderModule modules[MAX_MODULES];
static int module_count, pipeline_count;

static int module_number(VkShaderModule m) {
    for (int i = module_count - 1; i >= 0; i--)
        if (modules[i] == m) return i;
    return -1;
}

static void write_file(const char *name, const void *data, size_t size) {
    const char *dir = getenv("WGT_INSPECT_DIR");
    if (!dir) return;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(data, 1, size, f);
    fclose(f);
}

static VKAPI_ATTR VkResult VKAPI_CALL create_instance(const VkInstanceCreateInfo *info, const VkAllocationCallbacks *alloc,
                                                      VkInstance *out) {
    VkLayerInstanceCreateInfo *link = (VkLayerInstanceCreateInfo *)info->pNext;
    while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO && link->function == VK_LAYER_LINK_INFO))
        link = (VkLayerInstanceCreateInfo *)link->pNext;
    if (!link) return VK_ERROR_INITIALIZATION_FAILED;
    next_instance_proc = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    PFN_vkCreateInstance next = (PFN_vkCreateInstance)next_instance_proc(NULL, "vkCreateInstance");
    VkResult r = next(info, alloc, out);
    if (r == VK_SUCCESS) instance = *out;
    return r;
}

static int offers_statistics(VkPhysicalDevice pd) {
    PFN_vkEnumerateDeviceExtensionProperties list =
        (PFN_vkEnumerateDeviceExtensionProperties)next_instance_proc(instance, "vkEnumerateDeviceExtensionProperties");
    uint32_t n = 0;
    if (!list || list(pd, NULL, &n, NULL) != VK_SUCCESS) return 0;
    VkExtensionProperties *props = calloc(n ? n : 1, sizeof *props);
    int found = 0;
    if (props && list(pd, NULL, &n, props) == VK_SUCCESS)
        for (uint32_t i = 0; i < n; i++) found |= !strcmp(props[i].extensionName, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    free(props);
    return found;
}

static VKAPI_ATTR VkResult VKAPI_CALL create_device(VkPhysicalDevice pd, const VkDeviceCreateInfo *info,
                                                    const VkAllocationCallbacks *alloc, VkDevice *out) {
    VkLayerDeviceCreateInfo *link = (VkLayerDeviceCreateInfo *)info->pNext;
    while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO && link->function == VK_LAYER_LINK_INFO))
        link = (VkLayerDeviceCreateInfo *)link->pNext;
    if (!link) return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr instance_proc = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    next_device_proc = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;

    /* The caller's request plus the extension and its feature, where offered. */
    int statistics = offers_statistics(pd);
    VkDeviceCreateInfo ours = *info;
    const char **names = calloc(info->enabledExtensionCount + 1, sizeof *names);
    if (!names) return VK_ERROR_OUT_OF_HOST_MEMORY;
    for (uint32_t i = 0; i < info->enabledExtensionCount; i++) names[i] = info->ppEnabledExtensionNames[i];
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR feature = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
    if (statistics) {
        names[ours.enabledExtensionCount++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
        ours.ppEnabledExtensionNames = names;
        feature.pipelineExecutableInfo = VK_TRUE;
        feature.pNext = (void *)ours.pNext;
        ours.pNext = &feature;
    }
    PFN_vkCreateDevice next = (PFN_vkCreateDevice)instance_proc(instance, "vkCreateDevice");
    VkResult r = next(pd, &ours, alloc, out);
    free(names);
    fprintf(stderr, "[pipeline-stats] device created (pipeline statistics %s)\n", statistics ? "on" : "not offered");
    if (r != VK_SUCCESS) return r;
#define DEVICE_PROC(field, name) dev.field = (void *)next_device_proc(*out, name)
    DEVICE_PROC(create_compute_pipelines, "vkCreateComputePipelines");
    DEVICE_PROC(create_shader_module, "vkCreateShaderModule");
    DEVICE_PROC(executable_properties, "vkGetPipelineExecutablePropertiesKHR");
    DEVICE_PROC(executable_statistics, "vkGetPipelineExecutableStatisticsKHR");
    DEVICE_PROC(create_pipeline_cache, "vkCreatePipelineCache");
    DEVICE_PROC(pipeline_cache_data, "vkGetPipelineCacheData");
    DEVICE_PROC(destroy_pipeline_cache, "vkDestroyPipelineCache");
    DEVICE_PROC(destroy_pipeline, "vkDestroyPipeline");
#undef DEVICE_PROC
    dev.statistics = statistics && dev.executable_properties && dev.executable_statistics;
    return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL create_shader_module(VkDevice d, const VkShaderModuleCreateInfo *info,
                                                           const VkAllocationCallbacks *alloc, VkShaderModule *out) {
    VkResult r = dev.create_shader_module(d, info, alloc, out);
    if (r == VK_SUCCESS && module_count < MAX_MODULES) {
        char name[64];
        snprintf(name, sizeof name, "%d.spv", module_count);
        write_file(name, info->pCode, info->codeSize);
        modules[module_count++] = *out;
    }
    return r;
}

static void print_statistics(VkDevice d, VkPipeline pipeline, int number, int module) {
    VkPipelineInfoKHR info = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = pipeline};
    VkPipelineExecutablePropertiesKHR props[4];
    uint32_t n = 4;
    for (uint32_t i = 0; i < n; i++) props[i] = (VkPipelineExecutablePropertiesKHR){.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR};
    if (dev.executable_properties(d, &info, &n, props) < 0) return;
    for (uint32_t e = 0; e < n; e++) {
        fprintf(stderr, "[pipeline-stats] pipeline %d module %d %s (subgroup %u):", number, module, props[e].name,
                props[e].subgroupSize);
        VkPipelineExecutableInfoKHR which = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, .pipeline = pipeline,
                                             .executableIndex = e};
        VkPipelineExecutableStatisticKHR stats[32];
        uint32_t count = 32;
        for (uint32_t i = 0; i < count; i++) stats[i] = (VkPipelineExecutableStatisticKHR){.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
        if (dev.executable_statistics(d, &which, &count, stats) < 0) count = 0;
        for (uint32_t s = 0; s < count; s++) {
            const VkPipelineExecutableStatisticKHR *st = &stats[s];
            if (st->format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR) fprintf(stderr, " %s=%u;", st->name, st->value.b32);
            else if (st->format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR) fprintf(stderr, " %s=%lld;", st->name, (long long)st->value.i64);
            else if (st->format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR) fprintf(stderr, " %s=%llu;", st->name, (unsigned long long)st->value.u64);
            else fprintf(stderr, " %s=%g;", st->name, st->value.f64);
        }
        fprintf(stderr, "\n");
    }
}

/* Builds the pipeline once more into a cache of its own and writes that cache's data: the
 * driver keeps its compiled code there. */
static void dump_cache(VkDevice d, const VkComputePipelineCreateInfo *info, int number, int module) {
    if (!getenv("WGT_INSPECT_DIR") || !dev.create_pipeline_cache || !dev.pipeline_cache_data) return;
    VkPipelineCacheCreateInfo cache_info = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    VkPipelineCache cache;
    if (dev.create_pipeline_cache(d, &cache_info, NULL, &cache) != VK_SUCCESS) return;
    VkPipeline extra;
    if (dev.create_compute_pipelines(d, cache, 1, info, NULL, &extra) == VK_SUCCESS) {
        size_t size = 0;
        void *data = NULL;
        if (dev.pipeline_cache_data(d, cache, &size, NULL) == VK_SUCCESS && (data = malloc(size)) &&
            dev.pipeline_cache_data(d, cache, &size, data) == VK_SUCCESS) {
            char name[64];
            snprintf(name, sizeof name, "cache_p%d_m%d.bin", number, module);
            write_file(name, data, size);
        }
        free(data);
        dev.destroy_pipeline(d, extra, NULL);
    }
    dev.destroy_pipeline_cache(d, cache, NULL);
}

static VKAPI_ATTR VkResult VKAPI_CALL create_compute_pipelines(VkDevice d, VkPipelineCache cache, uint32_t n,
                                                               const VkComputePipelineCreateInfo *infos,
                                                               const VkAllocationCallbacks *alloc, VkPipeline *out) {
    VkComputePipelineCreateInfo *ours = calloc(n ? n : 1, sizeof *ours);
    if (!ours) return VK_ERROR_OUT_OF_HOST_MEMORY;
    for (uint32_t i = 0; i < n; i++) {
        ours[i] = infos[i];
        if (dev.statistics) ours[i].flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    }
    VkResult r = dev.create_compute_pipelines(d, cache, n, ours, alloc, out);
    for (uint32_t i = 0; r == VK_SUCCESS && i < n; i++, pipeline_count++) {
        int module = module_number(infos[i].stage.module);
        if (dev.statistics) print_statistics(d, out[i], pipeline_count, module);
        dump_cache(d, &infos[i], pipeline_count, module);
    }
    free(ours);
    return r;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL device_proc(VkDevice d, const char *name);

static PFN_vkVoidFunction intercepted(const char *name) {
    if (!strcmp(name, "vkCreateComputePipelines")) return (PFN_vkVoidFunction)create_compute_pipelines;
    if (!strcmp(name, "vkCreateShaderModule")) return (PFN_vkVoidFunction)create_shader_module;
    if (!strcmp(name, "vkGetDeviceProcAddr")) return (PFN_vkVoidFunction)device_proc;
    return NULL;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL instance_proc(VkInstance inst, const char *name) {
    if (!strcmp(name, "vkGetInstanceProcAddr")) return (PFN_vkVoidFunction)instance_proc;
    if (!strcmp(name, "vkCreateInstance")) return (PFN_vkVoidFunction)create_instance;
    if (!strcmp(name, "vkCreateDevice")) return (PFN_vkVoidFunction)create_device;
    PFN_vkVoidFunction f = intercepted(name);
    if (f) return f;
    return next_instance_proc ? next_instance_proc(inst, name) : NULL;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL device_proc(VkDevice d, const char *name) {
    PFN_vkVoidFunction f = intercepted(name);
    return f ? f : next_device_proc(d, name);
}

EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface *v) {
    if (v->loaderLayerInterfaceVersion > 2) v->loaderLayerInterfaceVersion = 2;
    v->pfnGetInstanceProcAddr = instance_proc;
    v->pfnGetDeviceProcAddr = device_proc;
    v->pfnGetPhysicalDeviceProcAddr = NULL;
    return VK_SUCCESS;
}
