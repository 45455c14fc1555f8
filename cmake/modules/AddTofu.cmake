# Helpers that declare the Tofu-MLIR libraries. They wrap MLIR's and LLVM's
# add_*_library functions, but install each library into Tofu's own export
# set, TofuTargets, so that another CMake project can import it with
# find_package(Tofu) (see TofuConfig.cmake.in).

# Installs library `name` into lib/ and exports it as part of TofuTargets.
# Its users in an installed tree find the headers under include/.
function(add_tofu_library_install name)
  target_include_directories(${name} INTERFACE
    $<INSTALL_INTERFACE:${TOFU_INSTALL_INCLUDE_DIR}>)
  install(TARGETS ${name}
    EXPORT TofuTargets
    COMPONENT tofu-libraries
    LIBRARY DESTINATION ${TOFU_INSTALL_LIB_DIR}
    ARCHIVE DESTINATION ${TOFU_INSTALL_LIB_DIR}
    RUNTIME DESTINATION ${TOFU_INSTALL_BIN_DIR})
endfunction()

# A library that uses MLIR: add_mlir_library's arguments.
function(add_tofu_library name)
  add_mlir_library(${ARGV} DISABLE_INSTALL)
  add_tofu_library_install(${name})
  set_property(GLOBAL APPEND PROPERTY TOFU_ALL_LIBS ${name})
endfunction()

# A library that holds a dialect.
function(add_tofu_dialect_library name)
  set_property(GLOBAL APPEND PROPERTY TOFU_DIALECT_LIBS ${name})
  add_tofu_library(${ARGV})
endfunction()

# A library that holds a conversion between dialects.
function(add_tofu_conversion_library name)
  set_property(GLOBAL APPEND PROPERTY TOFU_CONVERSION_LIBS ${name})
  add_tofu_library(${ARGV})
endfunction()

# A library without MLIR (the partition algorithms): add_llvm_library's
# arguments.
function(add_tofu_llvm_library name)
  add_llvm_library(${ARGV} BUILDTREE_ONLY)
  add_tofu_library_install(${name})
  set_property(GLOBAL APPEND PROPERTY TOFU_ALL_LIBS ${name})
endfunction()
