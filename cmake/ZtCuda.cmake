# GPU targets are built whenever nvcc can be found, and skipped cleanly otherwise. A machine that
# has nvcc on its PATH but where CMake could not enable CUDA is a configuration error, not a quiet
# fallback: ZT_HAVE_CUDA is then the only thing the GPU build check (tests) needs to look at.
include(CheckLanguage)
check_language(CUDA)
find_program(ZT_NVCC_ON_PATH nvcc HINTS /usr/local/cuda/bin)
set(ZT_HAVE_CUDA OFF)
if(CMAKE_CUDA_COMPILER)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    # `native` fails on a machine with no GPU; sm_70 and older are rejected by CUDA 13.
    set(CMAKE_CUDA_ARCHITECTURES 80 90)
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  find_path(ZT_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}/include)
  find_library(ZT_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib64)
  if(NOT ZT_NCCL_INCLUDE_DIR OR NOT ZT_NCCL_LIBRARY)
    message(FATAL_ERROR "nvcc found but NCCL (nccl.h / libnccl) was not: install NCCL or remove nvcc from PATH")
  endif()
  set(ZT_HAVE_CUDA ON)
  message(STATUS "zero-teach: GPU targets ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, NCCL ${ZT_NCCL_LIBRARY})")
elseif(ZT_NVCC_ON_PATH)
  message(FATAL_ERROR "nvcc is at ${ZT_NVCC_ON_PATH} but CMake could not enable CUDA: refusing to skip the GPU targets silently")
else()
  message(STATUS "zero-teach: no nvcc found, GPU targets skipped")
endif()

# zt_cuda_flags(target): C++20 for nvcc (CMake 3.25 ignores CUDA_STANDARD 20) and no FMA
# contraction, the CUDA twin of -ffp-contract=off.
function(zt_cuda_flags target)
  # CMake 3.25 does not know nvcc 13's C++20 flag: ask for 20 as optional (so it adds nothing) and pass -std=c++20 by hand.
  set_target_properties(${target} PROPERTIES CUDA_STANDARD 20 CUDA_STANDARD_REQUIRED OFF)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-std=c++20 --fmad=false -Xcompiler=-ffp-contract=off>)
endfunction()
set(ZT_HAVE_CUDA_BUILT ${ZT_HAVE_CUDA} CACHE INTERNAL "GPU targets configured")
