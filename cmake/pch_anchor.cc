// The one source file of the object libraries that build the precompiled headers
// (cmake/ConvergePch.cmake): a target needs a source file for its .gch to be built.
