import sys

import calc

if calc.add(2, 3) != 5 or calc.mul(3, 4) != 12:
    print(f"check failed: add(2, 3) = {calc.add(2, 3)}, mul(3, 4) = {calc.mul(3, 4)}")
    sys.exit(1)
print("check passed")
