"""stablehlo-ref"""
