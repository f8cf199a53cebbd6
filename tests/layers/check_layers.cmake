# The build enforces the layers: one target's checks (tests/layers/CMakeLists.txt).
#
#   cmake -DCXX=<compiler> -DTARGET=<target> -DDIRS=<folder> -DWORK=<folder>
#         -DSOURCE_DIR=<project root> -DBUILD_INCLUDE=<build>/include -P check_layers.cmake
#
# DIRS/<target>.include_dirs lists, one a line, the include folders the
# target's own sources compile with (its header root, those of the targets
# it links, and the imported packages'). Each check compiles a one-line
# probe with the real compiler (-fsyntax-only) against those folders:
#
#   sees  HEADER          the probe `#include HEADER` must compile (a control:
#                         what the target links is reachable and compiles);
#   blind HEADER WITNESS  the probe must fail because HEADER is not found,
#                         and, so that the check is not vacuous (a renamed or
#                         missing header), WITNESS (a target that links what
#                         provides HEADER) must reach it (__has_include).
#
# What the compiler finds with no -I at all (g++ 12, Debian 12): /usr/include
# holds Debian's ATen/, c10/, caffe2/ and a few torch/*.h (script.h,
# library.h, custom_class.h, extension.h), and #include <ATen/ATen.h> or
# <torch/script.h> compiles in every target; an include path cannot hide
# them. The C++ API (<torch/torch.h>, <torch/types.h>, <torch/nn.h>) is
# under /usr/include/torch/csrc/api/include and <mpi.h> under
# /usr/lib/x86_64-linux-gnu/openmpi/include: only targets that link Torch or
# MPI get those folders. So for the targets without Torch (common, comm,
# grid) a scan of their folder also rejects any #include of torch/, ATen/,
# c10/ or caffe2/ (and a second scan closes the other hole, below).
cmake_minimum_required(VERSION 3.25)

foreach(var CXX TARGET DIRS WORK SOURCE_DIR BUILD_INCLUDE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_layers.cmake: -D${var}=... is required")
  endif()
endforeach()

# target | sees | header            or   target | blind | header | witness
set(checks
  "cellgan_common|sees|\"common/config.h\""
  "cellgan_common|blind|<torch/torch.h>|cellgan_nn"
  "cellgan_common|blind|<mpi.h>|cellgan_comm"
  "cellgan_common|blind|\"common/nn/networks.h\"|cellgan_nn"
  "cellgan_common|blind|\"common/comm/communicator.h\"|cellgan_comm"
  "cellgan_common|blind|\"grid/topology.h\"|cellgan_grid"

  "cellgan_comm|sees|\"common/bytes.h\""
  "cellgan_comm|sees|<mpi.h>"  # its own sources only: MPI is PRIVATE
  "cellgan_comm|blind|<torch/torch.h>|cellgan_nn"
  "cellgan_comm|blind|\"common/nn/networks.h\"|cellgan_nn"
  "cellgan_comm|blind|\"grid/topology.h\"|cellgan_grid"

  "cellgan_nn|sees|\"common/config.h\""
  "cellgan_nn|blind|<mpi.h>|cellgan_comm"
  "cellgan_nn|blind|\"common/comm/communicator.h\"|cellgan_comm"
  "cellgan_nn|blind|\"grid/topology.h\"|cellgan_grid"

  "cellgan_grid|sees|\"common/config.h\""
  "cellgan_grid|blind|<torch/torch.h>|cellgan_nn"
  "cellgan_grid|blind|<mpi.h>|cellgan_comm"
  "cellgan_grid|blind|\"common/nn/networks.h\"|cellgan_nn"
  "cellgan_grid|blind|\"common/comm/communicator.h\"|cellgan_comm"
  "cellgan_grid|blind|\"worker/cell_block.h\"|cellgan_worker"
  "cellgan_grid|blind|\"master/heartbeat_monitor.h\"|cellgan_master"

  "cellgan_master|sees|\"grid/topology.h\""
  "cellgan_master|sees|\"common/comm/communicator.h\""
  "cellgan_master|blind|\"worker/cell_block.h\"|cellgan_worker"
  "cellgan_master|blind|<mpi.h>|cellgan_comm"
  "cellgan_master|blind|\"app/commands.h\"|cellgan"

  "cellgan_worker|sees|\"grid/topology.h\""
  "cellgan_worker|sees|\"common/comm/communicator.h\""
  "cellgan_worker|blind|\"master/heartbeat_monitor.h\"|cellgan_master"
  "cellgan_worker|blind|<mpi.h>|cellgan_comm"
  "cellgan_worker|blind|\"app/commands.h\"|cellgan"

  "cellgan_sweep|sees|\"common/config.h\""
  "cellgan_sweep|blind|<torch/torch.h>|cellgan_nn"
  "cellgan_sweep|blind|<mpi.h>|cellgan_comm"
  "cellgan_sweep|blind|\"master/run_directory.h\"|cellgan_master"
  "cellgan_sweep|blind|\"worker/cell_block.h\"|cellgan_worker"
  "cellgan_sweep|blind|\"app/commands.h\"|cellgan"

  "cellgan_launch|sees|\"common/config.h\""
  "cellgan_launch|blind|<torch/torch.h>|cellgan_nn"
  "cellgan_launch|blind|<mpi.h>|cellgan_comm"
  "cellgan_launch|blind|\"master/run_directory.h\"|cellgan_master"
  "cellgan_launch|blind|\"sweep/sweep_runner.h\"|cellgan_sweep"

  "cellgan_sweep|sees|\"launch/child_process.h\""

  "cellgan|sees|\"common/comm/mpi_session.h\""
  "cellgan|sees|\"launch/launcher.h\""
  "cellgan|sees|\"sweep/sweep_runner.h\""
  "cellgan|blind|<mpi.h>|cellgan_comm"
)
# Each target's folder (its sources and headers, not its subfolders').
set(folder_cellgan_common common)
set(folder_cellgan_comm common/comm)
set(folder_cellgan_nn common/nn)
set(folder_cellgan_grid grid)
set(folder_cellgan_worker worker)
set(folder_cellgan_master master)
set(folder_cellgan_sweep sweep)
set(folder_cellgan_launch launch)
set(folder_cellgan app)
# The targets without Torch, whose folders are scanned for Torch includes.
set(no_torch cellgan_common cellgan_comm cellgan_grid cellgan_launch cellgan_sweep)

set(this ${TARGET})  # if(TARGET ...) would test for a target
set(failures 0)
set(probe_count 0)

# The flags CMake gives the target's sources: -I for the header roots in the
# build tree, -isystem for the packages' folders, nothing for the
# compiler's own folders (DIRS/implicit.include_dirs).
file(STRINGS ${DIRS}/implicit.include_dirs implicit_dirs)
set(implicit)
foreach(dir IN LISTS implicit_dirs)
  file(REAL_PATH ${dir} real)
  list(APPEND implicit ${real})
endforeach()

function(include_dirs_of target out)
  set(file ${DIRS}/${target}.include_dirs)
  if(NOT EXISTS ${file})
    message(FATAL_ERROR "${file} is missing: is ${target} in tests/layers/CMakeLists.txt?")
  endif()
  file(STRINGS ${file} dirs)
  set(flags)
  foreach(dir IN LISTS dirs)
    file(REAL_PATH ${dir} real)
    if(real IN_LIST implicit)
      continue()
    endif()
    string(FIND "${dir}" "${BUILD_INCLUDE}/" in_build)
    if(in_build EQUAL 0)
      list(APPEND flags -I${dir})
    else()
      list(APPEND flags -isystem ${dir})
    endif()
  endforeach()
  set(${out} ${flags} PARENT_SCOPE)
endfunction()

# compile(target text rc err): compiles `text` with the target's include folders.
function(compile target text out_rc out_err)
  math(EXPR n "${probe_count} + 1")
  set(probe_count ${n} PARENT_SCOPE)
  set(probe ${WORK}/probe_${n}.cpp)
  file(WRITE ${probe} "${text}\n")
  include_dirs_of(${target} flags)
  execute_process(COMMAND ${CXX} -std=c++17 -fsyntax-only ${flags} ${probe}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${out_rc} ${rc} PARENT_SCOPE)
  set(${out_err} "${out}${err}" PARENT_SCOPE)
endfunction()

function(fail message)
  message(SEND_ERROR "FAIL: ${message}")
  math(EXPR n "${failures} + 1")
  set(failures ${n} PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

foreach(check IN LISTS checks)
  string(REPLACE "|" ";" fields "${check}")
  list(GET fields 0 target)
  if(NOT target STREQUAL TARGET)
    continue()
  endif()
  list(GET fields 1 kind)
  list(GET fields 2 header)
  string(REGEX REPLACE "^[<\"](.*)[>\"]$" "\\1" name "${header}")
  if(kind STREQUAL "sees")
    compile(${target} "#include ${header}" rc err)
    if(rc EQUAL 0)
      message(STATUS "ok: ${target} compiles #include ${header}")
    else()
      fail("${target} should compile #include ${header}:\n${err}")
    endif()
  elseif(kind STREQUAL "blind")
    list(GET fields 3 witness)
    compile(${witness} "#if !__has_include(${header})\n#error ${name} not reachable\n#endif" rc err)
    if(NOT rc EQUAL 0)
      fail("${witness} should reach ${header}, else the check that ${target} cannot is vacuous:\n${err}")
      continue()
    endif()
    compile(${target} "#include ${header}" rc err)
    string(FIND "${err}" "${name}: No such file or directory" gcc_missing)
    string(FIND "${err}" "'${name}' file not found" clang_missing)
    if(rc EQUAL 0)
      fail("${target} compiles #include ${header}: it does not link ${witness}'s layer and must not see it")
    elseif(gcc_missing EQUAL -1 AND clang_missing EQUAL -1)
      fail("${target}: #include ${header} failed, but not because the header is out of reach:\n${err}")
    else()
      message(STATUS "ok: ${target} cannot include ${header} (${witness} can)")
    endif()
  else()
    message(FATAL_ERROR "check_layers.cmake: unknown check '${check}'")
  endif()
endforeach()

# The source scans. A quoted include is looked up first in the including
# file's own folder, which no include path can turn off: "nn/networks.h"
# in common/config.cpp would find common/nn/networks.h. So every quoted
# include must be spelled from the project root ("common/nn/networks.h"),
# which only the header roots resolve.
if(NOT DEFINED folder_${TARGET})
  message(FATAL_ERROR "check_layers.cmake: no folder known for target ${TARGET}")
endif()
set(folder ${folder_${TARGET}})
file(GLOB files ${SOURCE_DIR}/${folder}/*.h ${SOURCE_DIR}/${folder}/*.cpp)
foreach(f IN LISTS files)
  file(RELATIVE_PATH shown ${SOURCE_DIR} ${f})
  file(STRINGS ${f} quoted REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS quoted)
    if(NOT line MATCHES "\"(common|grid|worker|master|launch|sweep|app)/[^\"]*\"" OR line MATCHES "\\.\\./")
      fail("${shown}: '${line}' is not spelled from the project root (\"common/...\", \"grid/...\", ...)")
    endif()
  endforeach()
  if(this IN_LIST no_torch)
    file(STRINGS ${f} hits REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"](torch|ATen|c10|caffe2)/")
    if(hits)
      fail("${shown} includes Torch (${hits}); ${TARGET} has no Torch")
    endif()
  endif()
endforeach()
list(LENGTH files scanned)
if(this IN_LIST no_torch)
  message(STATUS "ok: the ${scanned} files of ${folder}/ spell their includes from the root and include no Torch")
else()
  message(STATUS "ok: the ${scanned} files of ${folder}/ spell their includes from the root")
endif()

if(probe_count EQUAL 0)
  message(FATAL_ERROR "check_layers.cmake: no check for target ${TARGET}")
endif()
if(failures GREATER 0)
  message(FATAL_ERROR "${failures} layer check(s) of ${TARGET} failed")
endif()
