# cmake -DINPUT=FILE -DOUTPUT=FILE.cpp -DNAME=function -P embed_text.cmake
# Writes a C++ source defining `std::string_view cellgan::NAME()` that
# returns the text of INPUT (a source-map comment line left out, so a page
# that inlines it asks for nothing more).
file(READ "${INPUT}" text)
string(REGEX REPLACE "\n//# sourceMappingURL=[^\n]*" "" text "${text}")
string(FIND "${text}" ")cellgan_embedded\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} holds the raw string's delimiter; it cannot be embedded as it is")
endif()
file(WRITE "${OUTPUT}.tmp" "// Generated from ${INPUT} by master/embed_text.cmake; do not edit.\n"
     "#include <string_view>\nnamespace cellgan {\nstd::string_view ${NAME}() {\n"
     "  static constexpr char text[] = R\"cellgan_embedded(${text})cellgan_embedded\";\n"
     "  return {text, sizeof text - 1};\n}\n}  // namespace cellgan\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
