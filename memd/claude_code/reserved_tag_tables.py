"""Data for `reserved_tags`: the homoglyph tables 2.1.332 reads tag names through.

`LETTER_LOOKALIKES` lists, per ASCII letter, every character the release reads as
that letter (itself, both cases, fullwidth, mathematical, circled, accented,
Cyrillic, Greek and other look-alikes). `BRACKET_LOOKALIKES` maps the characters
it takes for `<`, `>` and `/`. `SCRIPT_LOOKALIKES` maps the single look-alike
letters it folds before the compatibility decomposition.
"""

from __future__ import annotations

LETTER_LOOKALIKES: dict[str, str] = {
    "a": (
        "Aa\u00c0\u00c1\u00c2\u00c3\u00c4\u00c5\u00e0\u00e1\u00e2\u00e3\u00e4"
        "\u00e5\u0100\u0101\u0102\u0103\u0104\u0105\u01cd\u01ce\u01de\u01df"
        "\u01e0\u01e1\u01fa\u01fb\u0200\u0201\u0202\u0203\u0226\u0227\u0251"
        "\u0391\u03b1\u0410\u0430\u13aa\u1d00\u1d2c\u1d43\u1d45\u1e00\u1e01"
        "\u1ea0\u1ea1\u1ea2\u1ea3\u1ea4\u1ea5\u1ea6\u1ea7\u1ea8\u1ea9\u1eaa"
        "\u1eab\u1eac\u1ead\u1eae\u1eaf\u1eb0\u1eb1\u1eb2\u1eb3\u1eb4\u1eb5"
        "\u1eb6\u1eb7\u2090\u212b\u24b6\u24d0\u2c6d\u2c80\u2c81\ua4ee\uab7a"
        "\U0001d400\U0001d41a\U0001d434\U0001d44e\U0001d468\U0001d482\U0001d49c"
        "\U0001d4b6\U0001d4d0\U0001d4ea\U0001d504\U0001d51e\U0001d538\U0001d552"
        "\U0001d56c\U0001d586\U0001d5a0\U0001d5ba\U0001d5d4\U0001d5ee\U0001d608"
        "\U0001d622\U0001d63c\U0001d656\U0001d670\U0001d68a\U0001d6a8\U0001d6c2"
        "\U0001d6e2\U0001d6fc\U0001d71c\U0001d736\U0001d756\U0001d770\U0001d790"
        "\U0001d7aa\uff21\uff41"
    ),
    "b": (
        "Bb\u0299\u0392\u0412\u13cf\u13f4\u13fc\u1d2e\u1d47\u1e02\u1e03\u1e04"
        "\u1e05\u1e06\u1e07\u212c\u24b7\u24d1\u2c82\u2c83\ua4d0\uab9f\U0001d401"
        "\U0001d41b\U0001d435\U0001d44f\U0001d469\U0001d483\U0001d49d\U0001d4b7"
        "\U0001d4d1\U0001d4eb\U0001d505\U0001d51f\U0001d539\U0001d553\U0001d56d"
        "\U0001d587\U0001d5a1\U0001d5bb\U0001d5d5\U0001d5ef\U0001d609\U0001d623"
        "\U0001d63d\U0001d657\U0001d671\U0001d68b\U0001d6a9\U0001d6e3\U0001d71d"
        "\U0001d757\U0001d791\uff22\uff42"
    ),
    "c": (
        "Cc\u00c7\u00e7\u0106\u0107\u0108\u0109\u010a\u010b\u010c\u010d\u03f2"
        "\u03f9\u0421\u0441\u13df\u1d04\u1d9c\u1e08\u1e09\u2102\u212d\u216d"
        "\u217d\u24b8\u24d2\u2ca4\u2ca5\ua4da\ua7f2\uabaf\U0001d402\U0001d41c"
        "\U0001d436\U0001d450\U0001d46a\U0001d484\U0001d49e\U0001d4b8\U0001d4d2"
        "\U0001d4ec\U0001d506\U0001d520\U0001d53a\U0001d554\U0001d56e\U0001d588"
        "\U0001d5a2\U0001d5bc\U0001d5d6\U0001d5f0\U0001d60a\U0001d624\U0001d63e"
        "\U0001d658\U0001d672\U0001d68c\uff23\uff43"
    ),
    "d": (
        "Dd\u010e\u010f\u0500\u0501\u13a0\u13e7\u1d05\u1d30\u1d48\u1e0a\u1e0b"
        "\u1e0c\u1e0d\u1e0e\u1e0f\u1e10\u1e11\u1e12\u1e13\u2145\u2146\u216e"
        "\u217e\u24b9\u24d3\ua4d3\uab70\uabb7\U0001d403\U0001d41d\U0001d437"
        "\U0001d451\U0001d46b\U0001d485\U0001d49f\U0001d4b9\U0001d4d3\U0001d4ed"
        "\U0001d507\U0001d521\U0001d53b\U0001d555\U0001d56f\U0001d589\U0001d5a3"
        "\U0001d5bd\U0001d5d7\U0001d5f1\U0001d60b\U0001d625\U0001d63f\U0001d659"
        "\U0001d673\U0001d68d\uff24\uff44"
    ),
    "e": (
        "Ee\u00c8\u00c9\u00ca\u00cb\u00e8\u00e9\u00ea\u00eb\u0112\u0113\u0114"
        "\u0115\u0116\u0117\u0118\u0119\u011a\u011b\u0204\u0205\u0206\u0207"
        "\u0228\u0229\u0395\u03b5\u0415\u0435\u13ac\u1d07\u1d31\u1d49\u1e14"
        "\u1e15\u1e16\u1e17\u1e18\u1e19\u1e1a\u1e1b\u1e1c\u1e1d\u1eb8\u1eb9"
        "\u1eba\u1ebb\u1ebc\u1ebd\u1ebe\u1ebf\u1ec0\u1ec1\u1ec2\u1ec3\u1ec4"
        "\u1ec5\u1ec6\u1ec7\u2091\u212f\u2130\u2147\u24ba\u24d4\u2c88\u2c89"
        "\ua4f0\uab7c\U0001d404\U0001d41e\U0001d438\U0001d452\U0001d46c"
        "\U0001d486\U0001d4a0\U0001d4ba\U0001d4d4\U0001d4ee\U0001d508\U0001d522"
        "\U0001d53c\U0001d556\U0001d570\U0001d58a\U0001d5a4\U0001d5be\U0001d5d8"
        "\U0001d5f2\U0001d60c\U0001d626\U0001d640\U0001d65a\U0001d674\U0001d68e"
        "\U0001d6ac\U0001d6c6\U0001d6dc\U0001d6e6\U0001d700\U0001d716\U0001d720"
        "\U0001d73a\U0001d750\U0001d75a\U0001d774\U0001d78a\U0001d794\U0001d7ae"
        "\U0001d7c4\uff25\uff45"
    ),
    "f": (
        "Ff\u1da0\u1e1e\u1e1f\u2131\u24bb\u24d5\ua4dd\ua730\ua7f3\U0001d405"
        "\U0001d41f\U0001d439\U0001d453\U0001d46d\U0001d487\U0001d4a1\U0001d4bb"
        "\U0001d4d5\U0001d4ef\U0001d509\U0001d523\U0001d53d\U0001d557\U0001d571"
        "\U0001d58b\U0001d5a5\U0001d5bf\U0001d5d9\U0001d5f3\U0001d60d\U0001d627"
        "\U0001d641\U0001d65b\U0001d675\U0001d68f\uff26\uff46"
    ),
    "g": (
        "Gg\u011c\u011d\u011e\u011f\u0120\u0121\u0122\u0123\u01e6\u01e7\u01f4"
        "\u01f5\u0261\u0262\u0551\u0581\u13c0\u1d33\u1d4d\u1da2\u1e20\u1e21"
        "\u210a\u24bc\u24d6\ua4d6\ua7ac\uab90\U0001d406\U0001d420\U0001d43a"
        "\U0001d454\U0001d46e\U0001d488\U0001d4a2\U0001d4bc\U0001d4d6\U0001d4f0"
        "\U0001d50a\U0001d524\U0001d53e\U0001d558\U0001d572\U0001d58c\U0001d5a6"
        "\U0001d5c0\U0001d5da\U0001d5f4\U0001d60e\U0001d628\U0001d642\U0001d65c"
        "\U0001d676\U0001d690\uff27\uff47"
    ),
    "h": (
        "Hh\u0124\u0125\u021e\u021f\u029c\u02b0\u0397\u041d\u04ba\u04bb\u0540"
        "\u0570\u13bb\u13c2\u1d34\u1e22\u1e23\u1e24\u1e25\u1e26\u1e27\u1e28"
        "\u1e29\u1e2a\u1e2b\u1e96\u2095\u210b\u210c\u210d\u210e\u24bd\u24d7"
        "\u2c8e\u2c8f\ua4e7\uab8b\uab92\U0001d407\U0001d421\U0001d43b\U0001d455"
        "\U0001d46f\U0001d489\U0001d4a3\U0001d4bd\U0001d4d7\U0001d4f1\U0001d50b"
        "\U0001d525\U0001d53f\U0001d559\U0001d573\U0001d58d\U0001d5a7\U0001d5c1"
        "\U0001d5db\U0001d5f5\U0001d60f\U0001d629\U0001d643\U0001d65d\U0001d677"
        "\U0001d691\U0001d6ae\U0001d6e8\U0001d722\U0001d75c\U0001d796\uff28"
        "\uff48"
    ),
    "i": (
        "Ii\u00cc\u00cd\u00ce\u00cf\u00ec\u00ed\u00ee\u00ef\u0128\u0129\u012a"
        "\u012b\u012c\u012d\u012e\u012f\u0130\u0131\u0196\u01cf\u01d0\u0208"
        "\u0209\u020a\u020b\u0269\u026a\u0399\u03b9\u0406\u0456\u1d35\u1d62"
        "\u1da5\u1da6\u1e2c\u1e2d\u1e2e\u1e2f\u1ec8\u1ec9\u1eca\u1ecb\u2071"
        "\u2110\u2111\u2139\u2148\u2160\u2170\u24be\u24d8\u2c92\u2c93\ua4f2"
        "\ua7ae\U0001d408\U0001d422\U0001d43c\U0001d456\U0001d470\U0001d48a"
        "\U0001d4a4\U0001d4be\U0001d4d8\U0001d4f2\U0001d50c\U0001d526\U0001d540"
        "\U0001d55a\U0001d574\U0001d58e\U0001d5a8\U0001d5c2\U0001d5dc\U0001d5f6"
        "\U0001d610\U0001d62a\U0001d644\U0001d65e\U0001d678\U0001d692\U0001d6a4"
        "\U0001d6b0\U0001d6ca\U0001d6ea\U0001d704\U0001d724\U0001d73e\U0001d75e"
        "\U0001d778\U0001d798\U0001d7b2\uff29\uff49"
    ),
    "j": (
        "Jj\u0134\u0135\u01f0\u02b2\u037f\u03f3\u0408\u0458\u13ab\u1d0a\u1d36"
        "\u2149\u24bf\u24d9\ua4d9\uab7b\U0001d409\U0001d423\U0001d43d\U0001d457"
        "\U0001d471\U0001d48b\U0001d4a5\U0001d4bf\U0001d4d9\U0001d4f3\U0001d50d"
        "\U0001d527\U0001d541\U0001d55b\U0001d575\U0001d58f\U0001d5a9\U0001d5c3"
        "\U0001d5dd\U0001d5f7\U0001d611\U0001d62b\U0001d645\U0001d65f\U0001d679"
        "\U0001d693\uff2a\uff4a"
    ),
    "k": (
        "Kk\u0136\u0137\u01e8\u01e9\u039a\u03ba\u041a\u043a\u13e6\u1d0b\u1d37"
        "\u1d4f\u1e30\u1e31\u1e32\u1e33\u1e34\u1e35\u2096\u212a\u24c0\u24da"
        "\u2c94\u2c95\ua4d7\uabb6\U0001d40a\U0001d424\U0001d43e\U0001d458"
        "\U0001d472\U0001d48c\U0001d4a6\U0001d4c0\U0001d4da\U0001d4f4\U0001d50e"
        "\U0001d528\U0001d542\U0001d55c\U0001d576\U0001d590\U0001d5aa\U0001d5c4"
        "\U0001d5de\U0001d5f8\U0001d612\U0001d62c\U0001d646\U0001d660\U0001d67a"
        "\U0001d694\U0001d6b1\U0001d6cb\U0001d6de\U0001d6eb\U0001d705\U0001d718"
        "\U0001d725\U0001d73f\U0001d752\U0001d75f\U0001d779\U0001d78c\U0001d799"
        "\U0001d7b3\U0001d7c6\uff2b\uff4b"
    ),
    "l": (
        "Ll\u0139\u013a\u013b\u013c\u013d\u013e\u029f\u02e1\u04c0\u04cf\u13de"
        "\u1d38\u1dab\u1e36\u1e37\u1e38\u1e39\u1e3a\u1e3b\u1e3c\u1e3d\u2097"
        "\u2112\u2113\u216c\u217c\u24c1\u24db\ua4e1\uabae\U0001d40b\U0001d425"
        "\U0001d43f\U0001d459\U0001d473\U0001d48d\U0001d4a7\U0001d4c1\U0001d4db"
        "\U0001d4f5\U0001d50f\U0001d529\U0001d543\U0001d55d\U0001d577\U0001d591"
        "\U0001d5ab\U0001d5c5\U0001d5df\U0001d5f9\U0001d613\U0001d62d\U0001d647"
        "\U0001d661\U0001d67b\U0001d695\uff2c\uff4c"
    ),
    "m": (
        "Mm\u039c\u041c\u043c\u13b7\u1d0d\u1d39\u1d50\u1e3e\u1e3f\u1e40\u1e41"
        "\u1e42\u1e43\u2098\u2133\u216f\u217f\u24c2\u24dc\u2c98\u2c99\ua4df"
        "\uab87\U0001d40c\U0001d426\U0001d440\U0001d45a\U0001d474\U0001d48e"
        "\U0001d4a8\U0001d4c2\U0001d4dc\U0001d4f6\U0001d510\U0001d52a\U0001d544"
        "\U0001d55e\U0001d578\U0001d592\U0001d5ac\U0001d5c6\U0001d5e0\U0001d5fa"
        "\U0001d614\U0001d62e\U0001d648\U0001d662\U0001d67c\U0001d696\U0001d6b3"
        "\U0001d6ed\U0001d727\U0001d761\U0001d79b\uff2d\uff4d"
    ),
    "n": (
        "Nn\u00d1\u00f1\u0143\u0144\u0145\u0146\u0147\u0148\u01f8\u01f9\u0274"
        "\u039d\u0548\u0578\u1d3a\u1db0\u1e44\u1e45\u1e46\u1e47\u1e48\u1e49"
        "\u1e4a\u1e4b\u207f\u2099\u2115\u24c3\u24dd\u2c9a\u2c9b\ua4e0\U0001d40d"
        "\U0001d427\U0001d441\U0001d45b\U0001d475\U0001d48f\U0001d4a9\U0001d4c3"
        "\U0001d4dd\U0001d4f7\U0001d511\U0001d52b\U0001d545\U0001d55f\U0001d579"
        "\U0001d593\U0001d5ad\U0001d5c7\U0001d5e1\U0001d5fb\U0001d615\U0001d62f"
        "\U0001d649\U0001d663\U0001d67d\U0001d697\U0001d6b4\U0001d6ee\U0001d728"
        "\U0001d762\U0001d79c\uff2e\uff4e"
    ),
    "o": (
        "Oo\u00d2\u00d3\u00d4\u00d5\u00d6\u00f2\u00f3\u00f4\u00f5\u00f6\u014c"
        "\u014d\u014e\u014f\u0150\u0151\u01a0\u01a1\u01d1\u01d2\u01ea\u01eb"
        "\u01ec\u01ed\u020c\u020d\u020e\u020f\u022a\u022b\u022c\u022d\u022e"
        "\u022f\u0230\u0231\u039f\u03bf\u041e\u043e\u0555\u0585\u1d0f\u1d3c"
        "\u1d52\u1e4c\u1e4d\u1e4e\u1e4f\u1e50\u1e51\u1e52\u1e53\u1ecc\u1ecd"
        "\u1ece\u1ecf\u1ed0\u1ed1\u1ed2\u1ed3\u1ed4\u1ed5\u1ed6\u1ed7\u1ed8"
        "\u1ed9\u1eda\u1edb\u1edc\u1edd\u1ede\u1edf\u1ee0\u1ee1\u1ee2\u1ee3"
        "\u2092\u2134\u24c4\u24de\u2c9e\u2c9f\ua4f3\U0001d40e\U0001d428"
        "\U0001d442\U0001d45c\U0001d476\U0001d490\U0001d4aa\U0001d4c4\U0001d4de"
        "\U0001d4f8\U0001d512\U0001d52c\U0001d546\U0001d560\U0001d57a\U0001d594"
        "\U0001d5ae\U0001d5c8\U0001d5e2\U0001d5fc\U0001d616\U0001d630\U0001d64a"
        "\U0001d664\U0001d67e\U0001d698\U0001d6b6\U0001d6d0\U0001d6f0\U0001d70a"
        "\U0001d72a\U0001d744\U0001d764\U0001d77e\U0001d79e\U0001d7b8\uff2f"
        "\uff4f"
    ),
    "p": (
        "Pp\u03a1\u03c1\u0420\u0440\u13e2\u1d18\u1d3e\u1d56\u1d68\u1e54\u1e55"
        "\u1e56\u1e57\u209a\u2119\u24c5\u24df\u2ca2\u2ca3\ua4d1\uabb2\U0001d40f"
        "\U0001d429\U0001d443\U0001d45d\U0001d477\U0001d491\U0001d4ab\U0001d4c5"
        "\U0001d4df\U0001d4f9\U0001d513\U0001d52d\U0001d547\U0001d561\U0001d57b"
        "\U0001d595\U0001d5af\U0001d5c9\U0001d5e3\U0001d5fd\U0001d617\U0001d631"
        "\U0001d64b\U0001d665\U0001d67f\U0001d699\U0001d6b8\U0001d6d2\U0001d6e0"
        "\U0001d6f2\U0001d70c\U0001d71a\U0001d72c\U0001d746\U0001d754\U0001d766"
        "\U0001d780\U0001d78e\U0001d7a0\U0001d7ba\U0001d7c8\uff30\uff50"
    ),
    "q": (
        "Qq\u051a\u051b\u0536\u0566\u211a\u24c6\u24e0\ua7f4\U0001d410\U0001d42a"
        "\U0001d444\U0001d45e\U0001d478\U0001d492\U0001d4ac\U0001d4c6\U0001d4e0"
        "\U0001d4fa\U0001d514\U0001d52e\U0001d548\U0001d562\U0001d57c\U0001d596"
        "\U0001d5b0\U0001d5ca\U0001d5e4\U0001d5fe\U0001d618\U0001d632\U0001d64c"
        "\U0001d666\U0001d680\U0001d69a\uff31\uff51"
    ),
    "r": (
        "Rr\u0154\u0155\u0156\u0157\u0158\u0159\u01a6\u0210\u0211\u0212\u0213"
        "\u0280\u02b3\u13a1\u13d2\u1d3f\u1d63\u1e58\u1e59\u1e5a\u1e5b\u1e5c"
        "\u1e5d\u1e5e\u1e5f\u211b\u211c\u211d\u24c7\u24e1\ua4e3\uab71\uaba2"
        "\U0001d411\U0001d42b\U0001d445\U0001d45f\U0001d479\U0001d493\U0001d4ad"
        "\U0001d4c7\U0001d4e1\U0001d4fb\U0001d515\U0001d52f\U0001d549\U0001d563"
        "\U0001d57d\U0001d597\U0001d5b1\U0001d5cb\U0001d5e5\U0001d5ff\U0001d619"
        "\U0001d633\U0001d64d\U0001d667\U0001d681\U0001d69b\uff32\uff52"
    ),
    "s": (
        "Ss\u015a\u015b\u015c\u015d\u015e\u015f\u0160\u0161\u017f\u0218\u0219"
        "\u02e2\u0405\u0455\u13da\u1e60\u1e61\u1e62\u1e63\u1e64\u1e65\u1e66"
        "\u1e67\u1e68\u1e69\u1e9b\u209b\u24c8\u24e2\ua4e2\ua731\ua7f1\uabaa"
        "\U0001d412\U0001d42c\U0001d446\U0001d460\U0001d47a\U0001d494\U0001d4ae"
        "\U0001d4c8\U0001d4e2\U0001d4fc\U0001d516\U0001d530\U0001d54a\U0001d564"
        "\U0001d57e\U0001d598\U0001d5b2\U0001d5cc\U0001d5e6\U0001d600\U0001d61a"
        "\U0001d634\U0001d64e\U0001d668\U0001d682\U0001d69c\uff33\uff53"
    ),
    "t": (
        "Tt\u0162\u0163\u0164\u0165\u021a\u021b\u03a4\u03c4\u0422\u0442\u13a2"
        "\u1d1b\u1d40\u1d57\u1e6a\u1e6b\u1e6c\u1e6d\u1e6e\u1e6f\u1e70\u1e71"
        "\u1e97\u209c\u24c9\u24e3\u2ca6\u2ca7\ua4d4\uab72\U0001d413\U0001d42d"
        "\U0001d447\U0001d461\U0001d47b\U0001d495\U0001d4af\U0001d4c9\U0001d4e3"
        "\U0001d4fd\U0001d517\U0001d531\U0001d54b\U0001d565\U0001d57f\U0001d599"
        "\U0001d5b3\U0001d5cd\U0001d5e7\U0001d601\U0001d61b\U0001d635\U0001d64f"
        "\U0001d669\U0001d683\U0001d69d\U0001d6bb\U0001d6d5\U0001d6f5\U0001d70f"
        "\U0001d72f\U0001d749\U0001d769\U0001d783\U0001d7a3\U0001d7bd\uff34"
        "\uff54"
    ),
    "u": (
        "Uu\u00d9\u00da\u00db\u00dc\u00f9\u00fa\u00fb\u00fc\u0168\u0169\u016a"
        "\u016b\u016c\u016d\u016e\u016f\u0170\u0171\u0172\u0173\u01af\u01b0"
        "\u01d3\u01d4\u01d5\u01d6\u01d7\u01d8\u01d9\u01da\u01db\u01dc\u0214"
        "\u0215\u0216\u0217\u03c5\u054d\u057d\u13cc\u1d1c\u1d41\u1d58\u1d64"
        "\u1db8\u1e72\u1e73\u1e74\u1e75\u1e76\u1e77\u1e78\u1e79\u1e7a\u1e7b"
        "\u1ee4\u1ee5\u1ee6\u1ee7\u1ee8\u1ee9\u1eea\u1eeb\u1eec\u1eed\u1eee"
        "\u1eef\u1ef0\u1ef1\u24ca\u24e4\ua4f4\uab9c\U0001d414\U0001d42e"
        "\U0001d448\U0001d462\U0001d47c\U0001d496\U0001d4b0\U0001d4ca\U0001d4e4"
        "\U0001d4fe\U0001d518\U0001d532\U0001d54c\U0001d566\U0001d580\U0001d59a"
        "\U0001d5b4\U0001d5ce\U0001d5e8\U0001d602\U0001d61c\U0001d636\U0001d650"
        "\U0001d66a\U0001d684\U0001d69e\U0001d6d6\U0001d710\U0001d74a\U0001d784"
        "\U0001d7be\uff35\uff55"
    ),
    "v": (
        "Vv\u03bd\u0474\u0475\u13d9\u1d20\u1d5b\u1d65\u1e7c\u1e7d\u1e7e\u1e7f"
        "\u2164\u2174\u24cb\u24e5\ua4e6\uaba9\U0001d415\U0001d42f\U0001d449"
        "\U0001d463\U0001d47d\U0001d497\U0001d4b1\U0001d4cb\U0001d4e5\U0001d4ff"
        "\U0001d519\U0001d533\U0001d54d\U0001d567\U0001d581\U0001d59b\U0001d5b5"
        "\U0001d5cf\U0001d5e9\U0001d603\U0001d61d\U0001d637\U0001d651\U0001d66b"
        "\U0001d685\U0001d69f\U0001d6ce\U0001d708\U0001d742\U0001d77c\U0001d7b6"
        "\uff36\uff56"
    ),
    "w": (
        "Ww\u0174\u0175\u02b7\u051c\u051d\u13b3\u13d4\u1d21\u1d42\u1e80\u1e81"
        "\u1e82\u1e83\u1e84\u1e85\u1e86\u1e87\u1e88\u1e89\u1e98\u209d\u24cc"
        "\u24e6\ua4ea\uab83\uaba4\U0001d416\U0001d430\U0001d44a\U0001d464"
        "\U0001d47e\U0001d498\U0001d4b2\U0001d4cc\U0001d4e6\U0001d500\U0001d51a"
        "\U0001d534\U0001d54e\U0001d568\U0001d582\U0001d59c\U0001d5b6\U0001d5d0"
        "\U0001d5ea\U0001d604\U0001d61e\U0001d638\U0001d652\U0001d66c\U0001d686"
        "\U0001d6a0\uff37\uff57"
    ),
    "x": (
        "Xx\u02e3\u03a7\u03c7\u0425\u0445\u1d61\u1d6a\u1e8a\u1e8b\u1e8c\u1e8d"
        "\u2093\u2169\u2179\u24cd\u24e7\u2cac\u2cad\ua4eb\U0001d417\U0001d431"
        "\U0001d44b\U0001d465\U0001d47f\U0001d499\U0001d4b3\U0001d4cd\U0001d4e7"
        "\U0001d501\U0001d51b\U0001d535\U0001d54f\U0001d569\U0001d583\U0001d59d"
        "\U0001d5b7\U0001d5d1\U0001d5eb\U0001d605\U0001d61f\U0001d639\U0001d653"
        "\U0001d66d\U0001d687\U0001d6a1\U0001d6be\U0001d6d8\U0001d6f8\U0001d712"
        "\U0001d732\U0001d74c\U0001d76c\U0001d786\U0001d7a6\U0001d7c0\uff38"
        "\uff58"
    ),
    "y": (
        "Yy\u00dd\u00fd\u00ff\u0176\u0177\u0178\u0232\u0233\u028f\u02b8\u03a5"
        "\u0423\u0443\u13a9\u1e8e\u1e8f\u1e99\u1ef2\u1ef3\u1ef4\u1ef5\u1ef6"
        "\u1ef7\u1ef8\u1ef9\u209e\u24ce\u24e8\u2ca8\u2ca9\ua4ec\uab79\U0001d418"
        "\U0001d432\U0001d44c\U0001d466\U0001d480\U0001d49a\U0001d4b4\U0001d4ce"
        "\U0001d4e8\U0001d502\U0001d51c\U0001d536\U0001d550\U0001d56a\U0001d584"
        "\U0001d59e\U0001d5b8\U0001d5d2\U0001d5ec\U0001d606\U0001d620\U0001d63a"
        "\U0001d654\U0001d66e\U0001d688\U0001d6a2\U0001d6bc\U0001d6f6\U0001d730"
        "\U0001d76a\U0001d7a4\uff39\uff59"
    ),
    "z": (
        "Zz\u0179\u017a\u017b\u017c\u017d\u017e\u0396\u13c3\u1d22\u1dbb\u1e90"
        "\u1e91\u1e92\u1e93\u1e94\u1e95\u209f\u2124\u2128\u24cf\u24e9\u2c8c"
        "\u2c8d\ua4dc\uab93\U0001d419\U0001d433\U0001d44d\U0001d467\U0001d481"
        "\U0001d49b\U0001d4b5\U0001d4cf\U0001d4e9\U0001d503\U0001d51d\U0001d537"
        "\U0001d551\U0001d56b\U0001d585\U0001d59f\U0001d5b9\U0001d5d3\U0001d5ed"
        "\U0001d607\U0001d621\U0001d63b\U0001d655\U0001d66f\U0001d689\U0001d6a3"
        "\U0001d6ad\U0001d6e7\U0001d721\U0001d75b\U0001d795\uff3a\uff5a"
    ),
}
BRACKET_LOOKALIKES: dict[str, str] = {
    "\u02c2": "<",
    "\u02c3": ">",
    "\u1433": ">",
    "\u1438": "<",
    "\u16b2": "<",
    "\u2039": "<",
    "\u203a": ">",
    "\u226e": "<",
    "\u226f": ">",
    "\u227a": "<",
    "\u227b": ">",
    "\u2280": "<",
    "\u2281": ">",
    "\u22d6": "<",
    "\u22d7": ">",
    "\u2329": "<",
    "\u232a": ">",
    "\u276c": "<",
    "\u276d": ">",
    "\u276e": "<",
    "\u276f": ">",
    "\u2770": "<",
    "\u2771": ">",
    "\u27e8": "<",
    "\u27e9": ">",
    "\u2991": "<",
    "\u2993": "<",
    "\u29fc": "<",
    "\u29fd": ">",
    "\u2a79": "<",
    "\u2aa6": "<",
    "\u3008": "<",
    "\u3009": ">",
    "\ufe3f": "<",
    "\ufe40": ">",
    "\ufe64": "<",
    "\ufe65": ">",
    "\uff1c": "<",
    "\uff1e": ">",
    "\U00016f3f": ">",
    "\U0001d236": "<",
    "\U0001d237": ">",
    "\u226a": "<",
    "\u22d8": "<",
    "\u2aa1": "<",
    "\u2af7": "<",
    "\u27ea": "<",
    "\ufe3d": "<",
    "\uff0f": "/",
    "\u2215": "/",
    "\u2044": "/",
}
SCRIPT_LOOKALIKES: dict[str, str] = {
    "\u0430": "a",
    "\u0435": "e",
    "\u043e": "o",
    "\u0440": "p",
    "\u0441": "c",
    "\u0443": "y",
    "\u0445": "x",
    "\u043a": "k",
    "\u0456": "i",
    "\u0458": "j",
    "\u0455": "s",
    "\u0501": "d",
    "\u051b": "q",
    "\u051d": "w",
    "\u04bb": "h",
    "\u04cf": "l",
    "\u0412": "b",
    "\u041c": "m",
    "\u041d": "h",
    "\u0422": "t",
    "\u03b1": "a",
    "\u03b5": "e",
    "\u03b9": "i",
    "\u03ba": "k",
    "\u03bd": "v",
    "\u03bf": "o",
    "\u03c1": "p",
    "\u03c4": "t",
    "\u03c5": "u",
    "\u03c7": "x",
    "\u03f3": "j",
    "\u0392": "b",
    "\u0396": "z",
    "\u0397": "h",
    "\u039c": "m",
    "\u039d": "n",
    "\u03a5": "y",
    "\u1d00": "a",
    "\u0299": "b",
    "\u1d04": "c",
    "\u1d05": "d",
    "\u1d07": "e",
    "\ua730": "f",
    "\u0262": "g",
    "\u029c": "h",
    "\u026a": "i",
    "\u1d0a": "j",
    "\u1d0b": "k",
    "\u029f": "l",
    "\u1d0d": "m",
    "\u0274": "n",
    "\u1d0f": "o",
    "\u1d18": "p",
    "\u0280": "r",
    "\ua731": "s",
    "\u1d1b": "t",
    "\u1d1c": "u",
    "\u1d20": "v",
    "\u1d21": "w",
    "\u028f": "y",
    "\u1d22": "z",
    "\u0251": "a",
    "\u0261": "g",
    "\u0131": "i",
    "\u0475": "v",
    "\u0442": "t",
    "\u043c": "m",
    "\uab70": "d",
    "\uab71": "r",
    "\uab72": "t",
    "\uab79": "y",
    "\uab7a": "a",
    "\uab7b": "j",
    "\uab7c": "e",
    "\uab83": "w",
    "\uab87": "m",
    "\uab8b": "h",
    "\uab90": "g",
    "\uab92": "h",
    "\uab93": "z",
    "\uab9c": "u",
    "\uab9f": "b",
    "\uaba2": "r",
    "\uaba4": "w",
    "\uaba9": "v",
    "\uabaa": "s",
    "\uabae": "l",
    "\uabaf": "c",
    "\uabb2": "p",
    "\uabb6": "k",
    "\uabb7": "d",
    "\u13fc": "b",
    "\ua4d0": "b",
    "\ua4d1": "p",
    "\ua4d3": "d",
    "\ua4d4": "t",
    "\ua4d6": "g",
    "\ua4d7": "k",
    "\ua4d9": "j",
    "\ua4da": "c",
    "\ua4dc": "z",
    "\ua4dd": "f",
    "\ua4df": "m",
    "\ua4e0": "n",
    "\ua4e1": "l",
    "\ua4e2": "s",
    "\ua4e3": "r",
    "\ua4e6": "v",
    "\ua4e7": "h",
    "\ua4ea": "w",
    "\ua4eb": "x",
    "\ua4ec": "y",
    "\ua4ee": "a",
    "\ua4f0": "e",
    "\ua4f2": "i",
    "\ua4f3": "o",
    "\ua4f4": "u",
    "\u0566": "q",
    "\u0570": "h",
    "\u0578": "n",
    "\u057d": "u",
    "\u0581": "g",
    "\u0585": "o",
    "\u03f2": "c",
    "\u2ca5": "c",
    "\u0269": "i",
    "\u2c81": "a",
    "\u2c83": "b",
    "\u2c89": "e",
    "\u2c8f": "h",
    "\u2c93": "i",
    "\u2c95": "k",
    "\u2c99": "m",
    "\u2c9b": "n",
    "\u2c9f": "o",
    "\u2ca3": "p",
    "\u2ca7": "t",
    "\u2ca9": "y",
    "\u2cad": "x",
    "\u2c8d": "z",
    "\u0410": "a",
    "\u0415": "e",
    "\u041e": "o",
    "\u0420": "p",
    "\u0421": "c",
    "\u0423": "y",
    "\u0425": "x",
    "\u041a": "k",
    "\u0406": "i",
    "\u0408": "j",
    "\u0405": "s",
    "\u0500": "d",
    "\u051a": "q",
    "\u051c": "w",
    "\u04ba": "h",
    "\u04c0": "l",
    "\u0391": "a",
    "\u0395": "e",
    "\u0399": "i",
    "\u039a": "k",
    "\u039f": "o",
    "\u03a1": "p",
    "\u03a4": "t",
    "\u03a7": "x",
    "\u037f": "j",
    "\ua7ae": "i",
    "\u01a6": "r",
    "\u2c6d": "a",
    "\ua7ac": "g",
    "\u0474": "v",
    "\u13a0": "d",
    "\u13a1": "r",
    "\u13a2": "t",
    "\u13a9": "y",
    "\u13aa": "a",
    "\u13ab": "j",
    "\u13ac": "e",
    "\u13b3": "w",
    "\u13b7": "m",
    "\u13bb": "h",
    "\u13c0": "g",
    "\u13c2": "h",
    "\u13c3": "z",
    "\u13cc": "u",
    "\u13cf": "b",
    "\u13d2": "r",
    "\u13d4": "w",
    "\u13d9": "v",
    "\u13da": "s",
    "\u13de": "l",
    "\u13df": "c",
    "\u13e2": "p",
    "\u13e6": "k",
    "\u13e7": "d",
    "\u13f4": "b",
    "\u0536": "q",
    "\u0540": "h",
    "\u0548": "n",
    "\u054d": "u",
    "\u0551": "g",
    "\u0555": "o",
    "\u03f9": "c",
    "\u2ca4": "c",
    "\u0196": "i",
    "\u2c80": "a",
    "\u2c82": "b",
    "\u2c88": "e",
    "\u2c8e": "h",
    "\u2c92": "i",
    "\u2c94": "k",
    "\u2c98": "m",
    "\u2c9a": "n",
    "\u2c9e": "o",
    "\u2ca2": "p",
    "\u2ca6": "t",
    "\u2ca8": "y",
    "\u2cac": "x",
    "\u2c8c": "z",
}
