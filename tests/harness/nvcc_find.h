// nvcc_find.h - the CUDA tests' one way to find nvcc as the JIT does (NVCC, CUDA_HOME/bin,
// PATH, /usr/local/cuda/bin), so that they skip exactly where the JIT would find none.
#ifndef PD_NVCC_FIND_H
#define PD_NVCC_FIND_H

#include <cstdlib>
#include <string>
#include <unistd.h>

namespace pd_test {

inline bool executable(const std::string &path) { return access(path.c_str(), X_OK) == 0; }

// The nvcc the JIT would find, or "".
inline std::string find_nvcc()
{
    if (const char *env = getenv("NVCC"); env && *env)
        return executable(env) ? env : "";
    if (const char *home = getenv("CUDA_HOME");
        home && *home && executable(std::string(home) + "/bin/nvcc"))
        return std::string(home) + "/bin/nvcc";
    std::string path = getenv("PATH") ? getenv("PATH") : "";
    for (size_t start = 0; start <= path.size();) {
        size_t end = path.find(':', start);
        if (end == std::string::npos)
            end = path.size();
        std::string cand = path.substr(start, end - start) + "/nvcc";
        if (end > start && executable(cand))
            return cand;
        start = end + 1;
    }
    return executable("/usr/local/cuda/bin/nvcc") ? "/usr/local/cuda/bin/nvcc" : "";
}

} // namespace pd_test

#endif // PD_NVCC_FIND_H
